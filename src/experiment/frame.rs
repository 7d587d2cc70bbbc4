//! The frame both kinds of experiment share: the keys every experiment file has (`name`,
//! `seed`, `replicates`, `[histories]`, `[output]`, `[compare]`) around the kind's own tables
//! (`[sweep]` and `[charts]` for cells, `[session]` for sessions), and what they hold once
//! checked ([`Frame`]): the histories, the strategies, the noise axis and where the tables go.
//!
//! Each shared key is declared once, in [`FrameFile`], and checked once, in [`Frame::check`].

use super::engine::config_hash;
use super::histories::{self, HistoriesFile, Source};
use super::keys::{self, one};
use super::limits;
use super::noise_axis::{NoiseAxis, NoiseKeys};
pub use super::output::{CompareFile, OutputFile};
use crate::cost::CostModel;
use crate::error::InputError;
use crate::formats::Formats;
use crate::noise::NoiseModel;
use crate::strategy::Strategy;
use serde::de::{self, DeserializeSeed, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use std::fmt;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

/// The keys every experiment file has, as written (after overrides).
#[derive(Debug, Clone, Serialize)]
pub struct FrameFile {
    pub name: String,
    pub seed: u64,
    /// Independent draws (label noise, notes, summaries) per history.
    pub replicates: u32,
    pub histories: HistoriesFile,
    pub output: OutputFile,
    #[serde(skip_serializing_if = "CompareFile::is_empty")]
    pub compare: CompareFile,
}

/// The frame's keys in the order messages list them: the kind's first tables come after
/// `histories`, the rest after `output` (`[charts]` was declared after `[output]`).
pub const fn fields<const N: usize>(
    before_output: &[&'static str],
    after_output: &[&'static str],
) -> [&'static str; N] {
    let mut out = [""; N];
    let head = ["name", "seed", "replicates", "histories"];
    let mut n = 0;
    let mut i = 0;
    while i < head.len() {
        out[n] = head[i];
        n += 1;
        i += 1;
    }
    i = 0;
    while i < before_output.len() {
        out[n] = before_output[i];
        n += 1;
        i += 1;
    }
    out[n] = "output";
    n += 1;
    i = 0;
    while i < after_output.len() {
        out[n] = after_output[i];
        n += 1;
        i += 1;
    }
    out[n] = "compare";
    assert!(n + 1 == N, "fields: N must count every key");
    out
}

/// A kind's own tables of an experiment file.
pub trait KindTables: Sized + Serialize {
    /// Every top-level key of the kind's files, from [`fields`].
    const FIELDS: &'static [&'static str];
    /// The tables read so far.
    type Partial: Default;
    /// Reads the value of the kind's table `key`.
    fn read<'de, A: MapAccess<'de>>(
        partial: &mut Self::Partial,
        key: &'static str,
        map: &mut A,
    ) -> Result<(), A::Error>;
    /// The tables, once every key was read (a required one missing is an error).
    fn finish<E: de::Error>(partial: Self::Partial) -> Result<Self, E>;
}

/// An experiment file as written (after overrides): the shared keys and the kind's tables.
#[derive(Debug, Clone, Serialize)]
pub struct Framed<K> {
    #[serde(flatten)]
    pub frame: FrameFile,
    #[serde(flatten)]
    pub kind: K,
}

impl<K> std::ops::Deref for Framed<K> {
    type Target = FrameFile;
    fn deref(&self) -> &FrameFile {
        &self.frame
    }
}

// Written by hand because serde cannot deny unknown fields of a flattened struct: this reads
// as the derived code of one struct with every key would (unknown keys refused with the whole
// list, values in the file's order, missing keys in the order of `fields`).
impl<'de, K: KindTables> Deserialize<'de> for Framed<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_struct("Framed", K::FIELDS, FramedVisitor(PhantomData))
    }
}

struct FramedVisitor<K>(PhantomData<K>);

impl<'de, K: KindTables> Visitor<'de> for FramedVisitor<K> {
    type Value = Framed<K>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("struct Framed")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Framed<K>, A::Error> {
        let mut name = None;
        let mut seed = None;
        let mut replicates = None;
        let mut histories = None;
        let mut output = None;
        let mut compare = None;
        let mut kind = K::Partial::default();
        while let Some(key) = map.next_key_seed(Field(K::FIELDS))? {
            match key {
                "name" => name = Some(map.next_value()?),
                "seed" => seed = Some(map.next_value()?),
                "replicates" => replicates = Some(map.next_value()?),
                "histories" => histories = Some(map.next_value()?),
                "output" => output = Some(map.next_value()?),
                "compare" => compare = Some(map.next_value()?),
                other => K::read(&mut kind, other, &mut map)?,
            }
        }
        let name = name.ok_or_else(|| de::Error::missing_field("name"))?;
        let seed = seed.ok_or_else(|| de::Error::missing_field("seed"))?;
        let histories = histories.ok_or_else(|| de::Error::missing_field("histories"))?;
        let kind = K::finish(kind)?;
        Ok(Framed {
            frame: FrameFile {
                name,
                seed,
                replicates: replicates.unwrap_or_else(one),
                histories,
                output: output.unwrap_or_default(),
                compare: compare.unwrap_or_default(),
            },
            kind,
        })
    }
}

/// A key of a hand-read table, one of `.0`.
pub(super) struct Field(pub(super) &'static [&'static str]);

impl<'de> DeserializeSeed<'de> for Field {
    type Value = &'static str;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<&'static str, D::Error> {
        d.deserialize_identifier(self)
    }
}

impl Visitor<'_> for Field {
    type Value = &'static str;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("field identifier")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<&'static str, E> {
        self.0
            .iter()
            .find(|f| **f == v)
            .copied()
            .ok_or_else(|| E::unknown_field(v, self.0))
    }
}

/// The frame of a validated experiment: what both kinds hold once their shared keys are
/// checked.
#[derive(Debug, Clone)]
pub struct Frame {
    pub origin: String,
    pub source: Source,
    pub cost: CostModel,
    pub strategies: Vec<Strategy>,
    /// The shorthand's uniform grid (empty when `noise` stands alone).
    pub false_negative: Vec<f64>,
    pub false_positive: Vec<f64>,
    /// The noise axis: the shorthand's grid, then `noise`.
    pub noise: Vec<NoiseModel>,
    pub output_dir: PathBuf,
    /// The table formats written (`output.formats`).
    pub formats: Formats,
    /// The rows table's formats (`output.rows_formats`, else `output.formats`).
    pub rows_formats: Formats,
    /// `compare.baseline`, as an index into `strategies`.
    pub baseline: Option<usize>,
}

/// The kind's table as the frame reads it: its name, strategies and noise keys.
pub(crate) struct KindKeys<'a> {
    /// `sweep` or `session`.
    pub table: &'static str,
    pub strategies: &'a [toml::Value],
    pub noise: NoiseKeys<'a>,
    /// The kind's own axes after its strategies, for the size limits.
    pub axes: &'a [(&'a str, usize)],
}

/// The frame's keys checked up to the strategies; [`Started::finish`] checks the output
/// keys after the kind has checked its own (so errors come in the order of the checks).
pub(crate) struct Started {
    pub(crate) source: Source,
    pub(crate) cost: CostModel,
    pub strategies: Vec<Strategy>,
    pub(crate) noise: NoiseAxis,
}

impl Frame {
    /// Checks the name, the replicates, the noise axis and the sizes of the axes (sizes first:
    /// later checks are quadratic in an axis's length), the histories and the strategies.
    pub(crate) fn check(
        origin: &str,
        file: &FrameFile,
        kind: KindKeys,
        resolve_files: bool,
    ) -> Result<Started, InputError> {
        keys::check_name(origin, &file.name)?;
        keys::check_replicates(origin, file.replicates)?;
        let noise = kind.noise.resolve(origin)?;
        let strategies_key = format!("{}.strategies", kind.table);
        let axes: Vec<(&str, usize)> = [(strategies_key.as_str(), kind.strategies.len())]
            .into_iter()
            .chain(kind.axes.iter().copied())
            .collect();
        limits::check_axes(origin, &axes, noise.models.len(), file.replicates)?;
        let (source, cost) = histories::histories(origin, &file.histories, resolve_files)?;
        let strategies = keys::strategies(origin, &strategies_key, kind.strategies)?;
        Ok(Started {
            source,
            cost,
            strategies,
            noise,
        })
    }

    /// `histories.flags_file`: the flags an external flagger gave, when there are.
    pub fn flags_file<'a>(&self, file: &'a FrameFile) -> Option<&'a Path> {
        file.histories.flags_file.as_deref().map(Path::new)
    }

    fn noise_axis(&self) -> NoiseAxis {
        NoiseAxis {
            false_negative: self.false_negative.clone(),
            false_positive: self.false_positive.clone(),
            models: self.noise.clone(),
        }
    }

    /// The file after overrides as JSON, with what the frame resolved written in: the
    /// strategies in their canonical labels, the noise axis (`listed`: `noise` was given) and
    /// the output folder.
    pub(crate) fn resolved_json<K: Serialize>(
        &self,
        file: &Framed<K>,
        table: &str,
        listed: bool,
    ) -> serde_json::Value {
        let mut v = serde_json::to_value(file).expect("config serialises");
        v[table]["strategies"] = self.strategies.iter().map(Strategy::label).collect();
        self.noise_axis().resolve_json(&mut v[table], listed);
        v["output"]["dir"] = self.output_dir.display().to_string().into();
        v
    }

    /// A fingerprint of what an experiment computes, from its resolved JSON.
    pub fn config_hash(resolved: serde_json::Value) -> String {
        config_hash(resolved)
    }
}

impl Started {
    /// Checks the output keys and the baseline: the frame, complete.
    pub(crate) fn finish(self, origin: &str, file: &FrameFile) -> Result<Frame, InputError> {
        let formats = keys::formats(origin, &file.output)?;
        let rows_formats = keys::rows_formats(origin, &file.output)?;
        let output_dir = keys::output_dir(&file.output, &file.name);
        let baseline = keys::compare_baseline(origin, &file.compare, &self.strategies)?;
        Ok(Frame {
            origin: origin.to_string(),
            source: self.source,
            cost: self.cost,
            strategies: self.strategies,
            false_negative: self.noise.false_negative,
            false_positive: self.noise.false_positive,
            noise: self.noise.models,
            output_dir,
            formats,
            rows_formats,
            baseline,
        })
    }
}
