//! Loaded histories read as a sweep needs them, not held whole: ctxlab JSONL files and agent
//! transcripts.
//!
//! Opening reads every file once and checks it as loading it whole would (JSONL line by line
//! through the same [`super::load::LineChecks`] as [`super::load_jsonl`]; a transcript through
//! its importer and label rules), so a bad file is refused, or left out with `--skip-bad`, with
//! the same message before anything is computed. What it keeps of a history is its
//! **skeleton**: its name, where it is (a JSONL file's byte ranges, a transcript's run), and
//! per record the id, kind, `required` and flag (11 bytes a record, against the text's
//! hundreds). A history is read again, whole, when a worker costs it; so a sweep's memory is
//! bounded by the histories in flight, not by the files' size. A transcript is imported twice
//! for it (its check and its read).
//!
//! A file that changes between the check and the read is refused, naming the file: a history
//! is read back only whole and with the ids the check saw.

use super::batch::{BadFiles, FileBatch, LeftOut, NamesAcrossFiles};
use super::import::{Format, LabelRules};
use super::load::{parse_line, LineChecks};
use super::record::{History, Kind, Record};
use super::RecordedCall;
use crate::error::InputError;
use std::fs::File;
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};

/// The buffer a file is read through while it is checked.
const READ_BUFFER: usize = 1 << 20;

/// The bytes of whole lines read at a time and parsed on every core while a JSONL file is
/// checked (a single file of histories was otherwise checked on one core).
const CHECK_BATCH: usize = 4 << 20;

/// The files' histories, by skeleton, in order of first appearance (file by file).
#[derive(Debug, Clone)]
pub struct Streamed {
    files: Vec<PathBuf>,
    reader: ReadAs,
    histories: Vec<Skeleton>,
}

/// How the files are read.
#[derive(Debug, Clone)]
enum ReadAs {
    Jsonl,
    Transcripts {
        format: Format,
        labels: LabelRules,
        flags: LabelRules,
    },
}

/// Where a history is in its file.
#[derive(Debug, Clone)]
enum Place {
    /// Runs of a JSONL file's lines: `(first byte, end byte, first line number)`, in order.
    Lines(Vec<(u64, u64, usize)>),
    /// The transcript's run of this number, in the order its importer reads them.
    Run(usize),
}

/// What a history is without its texts.
#[derive(Debug, Clone)]
pub struct Skeleton {
    pub name: String,
    /// Its file, as an index into [`Streamed::files`].
    file: usize,
    place: Place,
    /// Its transcript records the usage of its model calls.
    pub records_usage: bool,
    pub ids: Vec<u64>,
    pub kinds: Vec<Kind>,
    pub required: Vec<bool>,
    /// The flags its records give, or the flags file's; `None`: none given.
    pub flags: Option<Vec<bool>>,
    /// The bytes of its records' texts.
    pub text_bytes: u64,
}

impl Skeleton {
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The history with empty texts: what the flag confusion reads (kinds, truth, flags).
    pub fn without_texts(&self) -> History {
        let records = self
            .ids
            .iter()
            .zip(&self.kinds)
            .zip(&self.required)
            .map(|((&id, &kind), &required)| Record::new(id, "").kind(kind).required(required))
            .collect();
        let mut h = History::new(self.name.clone(), records);
        h.flags = self.flags.clone();
        h
    }
}

impl super::flags_file::RecordIds for Skeleton {
    fn name(&self) -> &str {
        &self.name
    }
    fn records(&self) -> usize {
        self.ids.len()
    }
    fn id(&self, r: usize) -> u64 {
        self.ids[r]
    }
}

impl Streamed {
    /// Checks every transcript of `files` (imported as `format`, labelled by `labels`, flagged
    /// by `flags`) and keeps each history's skeleton. See [`crate::history::batch`] for `bad`.
    pub fn open_transcripts(
        files: &[PathBuf],
        format: Format,
        labels: &LabelRules,
        flags: &LabelRules,
        bad: BadFiles,
    ) -> Result<(Streamed, Vec<LeftOut>), InputError> {
        let keep = |file, run, (h, recorded): (History, Vec<RecordedCall>)| {
            let mut skeleton = Skeleton::of(&h, file, Place::Run(run));
            skeleton.records_usage = !recorded.is_empty();
            skeleton
        };
        let (histories, left_out) =
            super::import::index_batch(files, format, labels, Some(flags), bad, keep)?;
        let reader = ReadAs::Transcripts {
            format,
            labels: *labels,
            flags: *flags,
        };
        Ok((
            Streamed {
                files: files.to_vec(),
                reader,
                histories,
            },
            left_out,
        ))
    }

    /// Checks every line of the JSONL `files` and keeps each history's skeleton; a history
    /// named in two files makes the later file a bad one. See [`crate::history::batch`] for `bad`.
    pub fn open_jsonl(
        files: &[PathBuf],
        bad: BadFiles,
    ) -> Result<(Streamed, Vec<LeftOut>), InputError> {
        let mut batch = FileBatch::new("history files");
        let mut names = NamesAcrossFiles::default();
        for (file, path) in files.iter().enumerate() {
            let read = index_file(path, file).and_then(|skeletons| {
                names.claim(path, skeletons.iter().map(|h| h.name.as_str()))?;
                Ok(skeletons)
            });
            batch.push(path, read);
        }
        let (histories, left_out) = batch.finish(bad)?;
        Ok((
            Streamed {
                files: files.to_vec(),
                reader: ReadAs::Jsonl,
                histories,
            },
            left_out,
        ))
    }

    pub fn len(&self) -> usize {
        self.histories.len()
    }

    pub fn is_empty(&self) -> bool {
        self.histories.is_empty()
    }

    pub fn skeletons(&self) -> &[Skeleton] {
        &self.histories
    }

    /// Gives history `i` the flags a flags file gave it.
    pub fn set_flags(&mut self, i: usize, flags: Vec<bool>) {
        self.histories[i].flags = Some(flags);
    }

    /// Whether the files are ctxlab JSONL (whose records may carry flags of their own).
    pub fn is_jsonl(&self) -> bool {
        matches!(self.reader, ReadAs::Jsonl)
    }

    /// History `i`, read back from its file, with the usage its transcript records.
    pub fn load(&self, i: usize) -> Result<(History, Vec<RecordedCall>), InputError> {
        let skeleton = &self.histories[i];
        let path = &self.files[skeleton.file];
        let changed = || {
            InputError::File {
            path: path.clone(),
            message: format!(
                "changed while the sweep read it: history {:?} no longer reads as it did when the file was checked; rerun the sweep on a file nothing writes to",
                skeleton.name
            ),
        }
        };
        let (mut history, recorded) = match (&skeleton.place, &self.reader) {
            (Place::Lines(lines), _) => (read_lines(path, lines)?, Vec::new()),
            (
                Place::Run(run),
                ReadAs::Transcripts {
                    format,
                    labels,
                    flags,
                },
            ) => super::import::load_run(path, *format, labels, Some(flags), *run)?
                .ok_or_else(changed)?,
            (Place::Run(_), ReadAs::Jsonl) => unreachable!("a JSONL history has lines"),
        };
        let ids_match = history.len() == skeleton.len()
            && history
                .records
                .iter()
                .zip(&skeleton.ids)
                .all(|(r, &id)| r.id == id);
        if !ids_match || history.name != skeleton.name {
            return Err(changed());
        }
        history.flags = skeleton.flags.clone();
        Ok((history, recorded))
    }
}

impl Skeleton {
    /// The skeleton of `h`, found in file `file` at `place`.
    fn of(h: &History, file: usize, place: Place) -> Skeleton {
        Skeleton {
            name: h.name.clone(),
            file,
            place,
            records_usage: false,
            ids: h.records.iter().map(|r| r.id).collect(),
            kinds: h.records.iter().map(|r| r.kind).collect(),
            required: h.records.iter().map(|r| r.required).collect(),
            flags: h.flags.clone(),
            text_bytes: h.records.iter().map(|r| r.text.len() as u64).sum(),
        }
    }
}

/// The history the JSONL `lines` of the file at `path` hold, read again; a line that no longer
/// reads as a record is refused with its error (the caller refuses one that reads differently).
fn read_lines(path: &Path, lines: &[(u64, u64, usize)]) -> Result<History, InputError> {
    let file = File::open(path).map_err(|e| InputError::io(path, e))?;
    let mut checks = LineChecks::new(path);
    let mut records = Vec::new();
    let mut bytes = Vec::new();
    for &(start, end, first_line) in lines {
        bytes.resize((end - start) as usize, 0);
        read_exact_at(&file, &mut bytes, start).map_err(|e| InputError::io(path, e))?;
        let text = line_text(path, &bytes, start, first_line)?;
        for (n, raw) in text.lines().enumerate() {
            if let Some(line) = checks.check(first_line + n, raw)? {
                records.push(line.record());
            }
        }
    }
    let name = if records.is_empty() {
        String::new()
    } else {
        checks.name(0)
    };
    Ok(History::new(name, records))
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(windows)]
fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> std::io::Result<()> {
    use std::os::windows::fs::FileExt as _;
    while !buf.is_empty() {
        match file.seek_read(buf, offset)? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}

/// Checks every line of the file at `path` (number `file` of the batch) and returns its
/// histories' skeletons.
fn index_file(path: &Path, file: usize) -> Result<Vec<Skeleton>, InputError> {
    use rayon::prelude::*;
    let reader = File::open(path).map_err(|e| InputError::io(path, e))?;
    let mut reader = BufReader::with_capacity(READ_BUFFER, reader);
    let mut checks = LineChecks::new(path);
    let mut skeletons: Vec<Skeleton> = Vec::new();
    let mut flags: Vec<Vec<Option<bool>>> = Vec::new();
    let mut previous: Option<usize> = None;
    let (mut offset, mut line_no) = (0u64, 0usize);
    // A batch of whole lines, each line's bytes in `batch` and its first byte in the file:
    // parsed on every core, then checked in order, so the first bad line is the one a
    // line-by-line check names.
    let mut batch: Vec<u8> = Vec::with_capacity(CHECK_BATCH + READ_BUFFER);
    let mut lines: Vec<(std::ops::Range<usize>, u64)> = Vec::new();
    loop {
        batch.clear();
        lines.clear();
        while batch.len() < CHECK_BATCH {
            let at = batch.len();
            let n = reader
                .read_until(b'\n', &mut batch)
                .map_err(|e| InputError::io(path, e))?;
            if n == 0 {
                break;
            }
            lines.push((at..at + n, offset));
            offset += n as u64;
        }
        if lines.is_empty() {
            break;
        }
        let first = line_no + 1;
        let parsed: Vec<_> = lines
            .par_iter()
            .enumerate()
            .map(|(k, (bytes, start))| {
                let raw = line_text(path, &batch[bytes.clone()], *start, first + k)?;
                parse_line(path, first + k, raw)
            })
            .collect();
        for ((k, parsed), (bytes, start)) in parsed.into_iter().enumerate().zip(&lines) {
            line_no = first + k;
            let Some(parsed) = parsed? else {
                continue;
            };
            let line = checks.accept(line_no, parsed)?;
            let (start, end) = (*start, start + bytes.len() as u64);
            if line.slot == skeletons.len() {
                skeletons.push(Skeleton {
                    name: checks.name(line.slot),
                    file,
                    place: Place::Lines(Vec::new()),
                    records_usage: false,
                    ids: Vec::new(),
                    kinds: Vec::new(),
                    required: Vec::new(),
                    flags: None,
                    text_bytes: 0,
                });
                flags.push(Vec::new());
            }
            let h = &mut skeletons[line.slot];
            let Place::Lines(lines) = &mut h.place else {
                unreachable!("made with lines above")
            };
            match lines.last_mut() {
                // Lines of one history in a row (blank ones between them too) are one run.
                Some(run) if previous == Some(line.slot) => run.1 = end,
                _ => lines.push((start, end, line_no)),
            }
            previous = Some(line.slot);
            h.ids.push(line.id);
            h.kinds.push(line.kind);
            h.required.push(line.required);
            h.text_bytes += line.text.len() as u64;
            flags[line.slot].push(line.flag);
        }
    }
    checks.finish()?;
    for (h, flags) in skeletons.iter_mut().zip(flags) {
        h.flags = flags.into_iter().collect();
    }
    Ok(skeletons)
}

/// Line `line_no`'s text, starting at byte `start` of the file: without its line ending, and
/// on the first line without a byte-order mark. Invalid UTF-8 is refused as
/// [`crate::text::decode`] refuses it: the line and the file's byte offset of the bad byte.
fn line_text<'b>(
    path: &Path,
    bytes: &'b [u8],
    start: u64,
    line_no: usize,
) -> Result<&'b str, InputError> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        InputError::line(
            path,
            line_no,
            format!(
                "invalid UTF-8 at byte offset {}: the file must be UTF-8 text",
                start + e.valid_up_to() as u64
            ),
        )
    })?;
    let text = match text.strip_suffix('\n') {
        Some(t) => t.strip_suffix('\r').unwrap_or(t),
        None => text,
    };
    Ok(if start == 0 {
        crate::text::without_bom(text)
    } else {
        text
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &[u8]) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn a_streamed_history_is_the_history_the_whole_file_parse_gives() {
        let dir = tempfile::tempdir().unwrap();
        // Two histories interleaved, a blank line, CRLF endings, a byte-order mark, flags.
        let text = "\u{feff}{\"history\":\"a\",\"id\":1,\"text\":\"x\",\"flag\":true}\r\n\
                    {\"history\":\"a\",\"id\":2,\"text\":\"yy\",\"kind\":\"tool_result\",\"flag\":false}\n\
                    \n\
                    {\"history\":\"b\",\"id\":5,\"text\":\"zzz\",\"required\":true}\n\
                    {\"history\":\"a\",\"id\":3,\"text\":\"w\",\"flag\":true}\n";
        let p = write(dir.path(), "h.jsonl", text.as_bytes());
        let whole = crate::history::load_jsonl(&p).unwrap();
        let (streamed, left_out) =
            Streamed::open_jsonl(std::slice::from_ref(&p), BadFiles::Refuse).unwrap();
        assert!(left_out.is_empty());
        assert_eq!(streamed.len(), 2);
        for (i, h) in whole.iter().enumerate() {
            assert_eq!(&streamed.load(i).unwrap().0, h);
        }
        let a = &streamed.skeletons()[0];
        // a's lines: 1–3 (with the blank line) in one run, then line 5 alone.
        let Place::Lines(lines) = &a.place else {
            panic!("a JSONL history has lines")
        };
        assert_eq!(lines.iter().map(|l| l.2).collect::<Vec<_>>(), [1, 5]);
        assert_eq!(a.ids, [1, 2, 3]);
        assert_eq!(a.flags, Some(vec![true, false, true]));
        assert_eq!(a.text_bytes, 4); // "x" + "yy" + "w"
        assert_eq!(streamed.skeletons()[1].required, [true]);
        assert_eq!(streamed.skeletons()[1].flags, None);
    }

    #[test]
    fn a_bad_line_is_refused_as_the_whole_file_parse_refuses_it() {
        let dir = tempfile::tempdir().unwrap();
        for text in [
            &b"{\"id\":1,\"text\":\"a\"}\n{\"id\":1,\"text\":\"b\"}\n"[..],
            b"{\"id\":1,\"text\":\"a\",\"flag\":true}\n{\"id\":2,\"text\":\"b\"}\n",
            b"{\"id\":1,\"text\":\"a\"}\n{\"id\":2,\"text\":\"\xff\"}\n",
            b"\n\n",
            b"[1, \"a\"]\n",
        ] {
            let p = write(dir.path(), "bad.jsonl", text);
            let whole = crate::history::load_jsonl(&p).unwrap_err().to_string();
            let streamed = Streamed::open_jsonl(std::slice::from_ref(&p), BadFiles::Refuse)
                .unwrap_err()
                .to_string();
            assert_eq!(streamed, whole);
        }
        let p = write(
            dir.path(),
            "bad.jsonl",
            b"{\"id\":1,\"text\":\"a\"}\n{\"id\":1,\"text\":\"b\"}\n",
        );
        assert_eq!(
            Streamed::open_jsonl(&[p], BadFiles::Refuse).unwrap_err().to_string(),
            format!(
                "{}:2: id 1 is not greater than the previous id 1 of history \"bad\"; ids must strictly increase",
                dir.path().join("bad.jsonl").display()
            )
        );
    }

    #[test]
    fn a_file_changed_after_its_check_is_refused_not_misread() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "h.jsonl",
            b"{\"id\":1,\"text\":\"a\"}\n{\"id\":2,\"text\":\"b\"}\n",
        );
        let (streamed, _) =
            Streamed::open_jsonl(std::slice::from_ref(&p), BadFiles::Refuse).unwrap();
        write(
            dir.path(),
            "h.jsonl",
            b"{\"id\":1,\"text\":\"a\"}\n{\"id\":7,\"text\":\"b\"}\n",
        );
        let e = streamed.load(0).unwrap_err().to_string();
        assert!(
            e.contains("h.jsonl: changed while the sweep read it"),
            "{e}"
        );
    }
}
