//! Where a sweep's histories come from: generated on demand, ctxlab JSONL files, or agent
//! transcripts imported as they are loaded.

use super::batch::{BadFiles, FileBatch, LeftOut, NamesAcrossFiles};
use super::stream::Streamed;
use super::{generate, CostedHistory, History};
use crate::error::InputError;
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where the histories come from, checked.
#[derive(Debug, Clone)]
pub enum Source {
    Generate(generate::GenerateConfig),
    /// ctxlab JSONL history files.
    Files(Vec<PathBuf>),
    /// Agent transcripts, imported and labelled as they are loaded.
    Transcripts {
        paths: Vec<PathBuf>,
        format: super::import::Format,
        labels: super::import::LabelRules,
        /// The rules the flags come from (what a harness could know at the time).
        flags: super::import::LabelRules,
    },
}

/// Histories a worker evaluates in one go, at most (see [`HistorySource::evaluate`]).
const HISTORIES_PER_TASK: usize = 4;

/// Where a run's histories come from. Generated histories are made on demand, one at a time,
/// so memory does not grow with their number; loaded ones are read (and checked) up front.
pub enum HistorySource {
    Generated(generate::GenerateConfig),
    /// Generated histories given a flags file: made up front, since the file is checked against
    /// every one of them, and shared with their costed forms rather than copied into them.
    Flagged(Vec<Arc<History>>),
    /// ctxlab JSONL files, checked whole up front and read again a history at a time as it is
    /// evaluated (see [`super::stream`]), so memory does not grow with the files' size.
    Streamed(Streamed),
}

impl HistorySource {
    /// Opens the histories, with their flags from `flags_file` when one is given (generated
    /// histories are then made up front: the file is checked against every one of them). Any
    /// bad file refuses, naming every one.
    pub fn open(source: &Source, flags_file: Option<&Path>) -> Result<HistorySource, InputError> {
        Ok(HistorySource::open_batch(source, flags_file, BadFiles::Refuse)?.0)
    }

    /// [`HistorySource::open`], with [`BadFiles::Skip`] leaving each bad history or transcript
    /// file out whole; returns the files left out with their reasons. A bad flags file is
    /// refused either way (it is one file, not one of the batch).
    pub fn open_batch(
        source: &Source,
        flags_file: Option<&Path>,
        bad: BadFiles,
    ) -> Result<(HistorySource, Vec<LeftOut>), InputError> {
        let (opened, left_out) = HistorySource::open_unflagged(source, bad)?;
        let Some(flags_file) = flags_file else {
            return Ok((opened, left_out));
        };
        let mut all: Vec<Arc<History>> = match opened {
            HistorySource::Generated(cfg) => {
                generate::generate(&cfg).into_iter().map(Arc::new).collect()
            }
            HistorySource::Flagged(all) => all,
            HistorySource::Streamed(streamed) => {
                return Ok((
                    HistorySource::Streamed(flag_streamed(streamed, flags_file)?),
                    left_out,
                ))
            }
        };
        let loaded: Vec<&History> = all.iter().map(|h| &**h).collect();
        let flags = super::flags_file::read(flags_file, &loaded)?;
        for (h, f) in all.iter_mut().zip(flags) {
            // Held once here, so this sets the flags in place.
            Arc::make_mut(h).flags = Some(f);
        }
        Ok((HistorySource::Flagged(all), left_out))
    }

    fn open_unflagged(
        source: &Source,
        bad: BadFiles,
    ) -> Result<(HistorySource, Vec<LeftOut>), InputError> {
        Ok(match source {
            Source::Generate(cfg) => (HistorySource::Generated(cfg.clone()), Vec::new()),
            Source::Transcripts {
                paths,
                format,
                labels,
                flags,
            } => {
                let (streamed, left_out) =
                    Streamed::open_transcripts(paths, *format, labels, flags, bad)?;
                (HistorySource::Streamed(streamed), left_out)
            }
            Source::Files(files) => {
                let (streamed, left_out) = Streamed::open_jsonl(files, bad)?;
                (HistorySource::Streamed(streamed), left_out)
            }
        })
    }

    pub fn len(&self) -> usize {
        match self {
            HistorySource::Generated(cfg) => cfg.count as usize,
            HistorySource::Flagged(h) => h.len(),
            HistorySource::Streamed(s) => s.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Each history's name and whether it records usage (generated ones record none).
    pub fn recorded(&self) -> Vec<(&str, bool)> {
        match self {
            HistorySource::Generated(_) | HistorySource::Flagged(_) => Vec::new(),
            HistorySource::Streamed(s) => s
                .skeletons()
                .iter()
                .map(|h| (h.name.as_str(), h.records_usage))
                .collect(),
        }
    }

    /// Costs (or generates) histories `range` in parallel, a few per task, and runs `evaluate`
    /// on each with a scratch reused within the task; returns each history's name and what
    /// `evaluate` made of it, in history order whatever the thread count. Fails only when a
    /// streamed file can no longer be read as it was checked.
    pub fn evaluate<S, T, F>(
        &self,
        range: std::ops::Range<usize>,
        cost: crate::cost::CostModel,
        evaluate: F,
    ) -> Result<Vec<(String, T)>, InputError>
    where
        S: Default + Send,
        T: Send,
        F: Fn(usize, &CostedHistory, &mut S) -> T + Sync + Send,
    {
        // Rayon runs each leaf of its split on one thread; its default leaves are a quarter of
        // a chunk's histories here, so the last one could keep one core busy for a fifth of a
        // second while the other waited (measured on a loaded sweep). Leaves of a few
        // histories keep both busy to the end; a scratch is made once per leaf.
        range
            .into_par_iter()
            .with_max_len(HISTORIES_PER_TASK)
            .map_init(S::default, |scratch, i| {
                let (name, costed) = self.costed(i, cost)?;
                let made = evaluate(i, &costed, scratch);
                Ok((name, made))
            })
            .collect()
    }

    /// History `i`'s name and costs (sharing its records, whose texts only the summarisers that
    /// write text read).
    pub fn costed(
        &self,
        i: usize,
        cost: crate::cost::CostModel,
    ) -> Result<(String, CostedHistory), InputError> {
        Ok(match self {
            HistorySource::Generated(cfg) => {
                let h = generate::generate_one(cfg, i as u32);
                (h.name.clone(), CostedHistory::shared(Arc::new(h), cost))
            }
            HistorySource::Flagged(all) => {
                let h = &all[i];
                (h.name.clone(), CostedHistory::shared(h.clone(), cost))
            }
            HistorySource::Streamed(streamed) => {
                let (h, recorded) = streamed.load(i)?;
                let name = h.name.clone();
                (
                    name,
                    CostedHistory::shared(Arc::new(h), cost).with_recorded(recorded),
                )
            }
        })
    }

    /// Every history, read whole: for the commands that look at all of them at once (a flag
    /// audit), not for a sweep.
    pub fn all(&self) -> Result<Vec<Arc<History>>, InputError> {
        match self {
            HistorySource::Generated(cfg) => {
                Ok(generate::generate(cfg).into_iter().map(Arc::new).collect())
            }
            HistorySource::Flagged(all) => Ok(all.clone()),
            HistorySource::Streamed(s) => (0..s.len())
                .map(|i| s.load(i).map(|(h, _)| Arc::new(h)))
                .collect(),
        }
    }
}

/// `streamed` with the flags `flags_file` gives its histories; a history whose records carry
/// flags of their own is refused (flags come from one place).
fn flag_streamed(mut streamed: Streamed, flags_file: &Path) -> Result<Streamed, InputError> {
    let own = streamed.skeletons().iter().find(|h| h.flags.is_some());
    if let (true, Some(h)) = (streamed.is_jsonl(), own) {
        return Err(already_flagged(flags_file, &h.name));
    }
    // Checked against the skeletons' ids: no history is read for it.
    let skeletons: Vec<&_> = streamed.skeletons().iter().collect();
    let flags = super::flags_file::read(flags_file, &skeletons)?;
    for (i, f) in flags.into_iter().enumerate() {
        streamed.set_flags(i, f);
    }
    Ok(streamed)
}

fn already_flagged(flags_file: &Path, name: &str) -> InputError {
    InputError::File {
        path: flags_file.to_path_buf(),
        message: format!(
            "history {name:?} already carries flags (the `flag` field of its records); give flags either in the history files or in histories.flags_file, not both"
        ),
    }
}

/// Histories from a checked source, generated or loaded; names must be unique across files.
pub fn load_source(source: &Source) -> Result<Vec<History>, InputError> {
    let histories = match source {
        Source::Generate(cfg) => generate::generate(cfg),
        Source::Transcripts {
            paths,
            format,
            labels,
            flags,
        } => super::import::load_files_recorded(paths, *format, labels, Some(flags))?
            .into_iter()
            .map(|(h, _)| h)
            .collect(),
        Source::Files(files) => load_history_files(files, BadFiles::Refuse)?.0,
    };
    Ok(histories)
}

/// Loads ctxlab JSONL history files as a batch (see [`crate::history::batch`]); a file holding
/// a history whose name an earlier file gave is a bad file.
pub fn load_history_files(
    files: &[PathBuf],
    bad: BadFiles,
) -> Result<(Vec<History>, Vec<LeftOut>), InputError> {
    let mut batch = FileBatch::new("history files");
    let mut names = NamesAcrossFiles::default();
    for f in files {
        let read = super::load_jsonl(f).and_then(|histories| {
            names.claim(f, histories.iter().map(|h| h.name.as_str()))?;
            Ok(histories)
        });
        batch.push(f, read);
    }
    batch.finish(bad)
}
