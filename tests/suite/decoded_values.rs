//! Every table of the shipped experiments, pinned by what it holds: the decoded values of each
//! Parquet table (column names and types, then every value in column and row order) and the
//! bytes of each CSV. How the Parquet is encoded (row groups, encodings, dictionaries,
//! statistics, compression) may change; what it decodes to may not, and the CSV may not change
//! a byte. `CTXLAB_UPDATE_PINS=1` writes the pins of the current code into
//! `decoded_pins.txt`, for a change that means to move a table (say which in its commit).
//!
//! The experiments on `../shared/data` are pinned where the data is, and skipped (said so)
//! where it is absent; `external.toml` needs `python3`.

use crate::common::*;
use polars::prelude::{DataType, ParquetReader, SerReader};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

const PINS_FILE: &str = "tests/suite/decoded_pins.txt";

/// (experiment file stem, reads `../shared/data`, needs `python3`).
const EXPERIMENTS: [(&str, bool, bool); 9] = [
    ("noise", false, false),
    ("strategies", false, false),
    ("noise-models", false, false),
    ("sessions", false, false),
    ("long", false, false),
    ("superseded", false, false),
    ("external", false, true),
    ("real", true, false),
    ("claude-code", true, false),
];

/// FNV-1a, 64 bits: a pin, not a defence.
pub(crate) struct Fnv(pub(crate) u64);

impl Fnv {
    pub(crate) fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    pub(crate) fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 = (self.0 ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// Rows, columns and the hash of a Parquet table's decoded values.
fn decoded(path: &Path) -> String {
    let df = ParquetReader::new(std::fs::File::open(path).unwrap())
        .finish()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut h = Fnv::new();
    for column in df.columns() {
        h.bytes(column.name().as_bytes());
        h.bytes(format!("{:?}", column.dtype()).as_bytes());
        let s = column.as_materialized_series();
        // A null is one byte no value starts with; a string ends with a 0 byte.
        match s.dtype() {
            DataType::UInt64 => s.u64().unwrap().iter().for_each(|v| match v {
                Some(v) => h.bytes(&v.to_le_bytes()),
                None => h.bytes(&[0xff]),
            }),
            DataType::Float64 => s.f64().unwrap().iter().for_each(|v| match v {
                Some(v) => h.bytes(&v.to_bits().to_le_bytes()),
                None => h.bytes(&[0xff]),
            }),
            DataType::Boolean => s.bool().unwrap().iter().for_each(|v| match v {
                Some(v) => h.bytes(&[u8::from(v)]),
                None => h.bytes(&[0xff]),
            }),
            DataType::String => s.str().unwrap().iter().for_each(|v| match v {
                Some(v) => {
                    h.bytes(v.as_bytes());
                    h.bytes(&[0]);
                }
                None => h.bytes(&[0xff]),
            }),
            other => panic!(
                "{}: column {} of type {other:?}, which this pin does not read",
                path.display(),
                column.name()
            ),
        }
    }
    format!(
        "{} rows, {} columns, values {:016x}",
        df.height(),
        df.width(),
        h.0
    )
}

fn csv_bytes(path: &Path) -> String {
    let mut h = Fnv::new();
    h.bytes(&std::fs::read(path).unwrap());
    format!("bytes {:016x}", h.0)
}

/// `experiment/table.ext: pin` for every table a run wrote.
fn pins_of(experiment: &str, out: &Path, pins: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(out).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let pin = match path.extension().and_then(|e| e.to_str()) {
            Some("parquet") => decoded(&path),
            Some("csv") => csv_bytes(&path),
            _ => continue,
        };
        pins.insert(format!("{experiment}/{name}"), pin);
    }
}

fn has_python() -> bool {
    std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The pins `file` holds, `name: pin` a line.
pub(crate) fn read_pins(file: &str) -> BTreeMap<String, String> {
    std::fs::read_to_string(root().join(file))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Writes `pins` into `file`, `name: pin` a line.
pub(crate) fn write_pins(file: &str, pins: &BTreeMap<String, String>) {
    let mut text = String::new();
    for (k, v) in pins {
        let _ = writeln!(text, "{k}: {v}");
    }
    std::fs::write(root().join(file), text).unwrap();
}

/// Fails naming every pin that moved: one that differs, one missing, and one `ran` says was
/// run that is no longer written.
pub(crate) fn assert_unmoved(
    pinned: &BTreeMap<String, String>,
    got: &BTreeMap<String, String>,
    ran: impl Fn(&str) -> bool,
) {
    let mut wrong = Vec::new();
    for (k, v) in got {
        match pinned.get(k) {
            Some(p) if p == v => {}
            Some(p) => wrong.push(format!("{k}: pinned {p}, now {v}")),
            None => wrong.push(format!("{k}: not pinned, now {v}")),
        }
    }
    for k in pinned.keys() {
        if ran(k) && !got.contains_key(k) {
            wrong.push(format!("{k}: pinned, no longer written"));
        }
    }
    assert!(
        wrong.is_empty(),
        "tables moved (CTXLAB_UPDATE_PINS=1 repins, for a change that means it):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn every_shipped_table_decodes_to_its_pinned_values() {
    let pinned = read_pins(PINS_FILE);
    let update = std::env::var_os("CTXLAB_UPDATE_PINS").is_some();
    let mut got = BTreeMap::new();
    let mut skipped = Vec::new();
    for (stem, data, python) in EXPERIMENTS {
        if (data && shared_data().is_none()) || (python && !has_python()) {
            skipped.push(stem);
            continue;
        }
        let out = tempfile::tempdir().unwrap();
        let dir = format!("output.dir={}", out.path().join("r").display());
        let file = format!("experiments/{stem}.toml");
        let o = ctxlab(&root(), &["sweep", &file, "-q", "--set", &dir]);
        assert!(o.status.success(), "{file}: {}", stderr(&o));
        pins_of(stem, &out.path().join("r"), &mut got);
    }
    if !skipped.is_empty() {
        println!("skipped (no ../shared/data or no python3): {skipped:?}");
    }
    if update {
        // Keep the pins of what this machine could not run.
        let mut all = pinned.clone();
        all.retain(|k, _| skipped.iter().any(|s| k.starts_with(&format!("{s}/"))));
        all.extend(got);
        write_pins(PINS_FILE, &all);
        return;
    }
    assert_unmoved(&pinned, &got, |k| {
        !skipped.iter().any(|s| k.starts_with(&format!("{s}/")))
    });
}
