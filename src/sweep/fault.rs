//! Fault injection for the tests: a run told to fail at a phase aborts there, as `kill -9`
//! would, so the tests can check that the folder never looks finished and that `--resume`
//! completes it. The CLI reads it from `CTXLAB_FAULT`; the library never reads the
//! environment.

use crate::error::ParseError;
use std::str::FromStr;

/// Where to abort.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// After this many chunks of this invocation were checkpointed (while this fault is set,
    /// every chunk that ends a history is, not only one every few seconds).
    AfterChunks(usize),
    /// In the middle of writing the final tables from the part files.
    Assembly,
    /// After the charts and the report were drawn into the staging folder.
    Charts,
    /// After the first file was moved into place.
    Publish,
    /// With every file in place but the manifest.
    Manifest,
    /// With the manifest in place, before the staging folder is removed.
    Cleanup,
    /// With the manifest in place, after this many entries of the staging folder (the folder
    /// itself last) were removed.
    CleanupAfter(usize),
}

/// How a fault is spelled in `CTXLAB_FAULT`: a word, or a word and a count (`chunks:K`).
enum Spelling {
    Word(&'static str, Fault),
    Counted(&'static str, fn(usize) -> Fault),
}

/// Every fault's spelling, in the order of [`Fault`]'s variants: what the parser reads and
/// what its message offers.
const SPELLINGS: [Spelling; 7] = [
    Spelling::Counted("chunks", Fault::AfterChunks),
    Spelling::Word("assembly", Fault::Assembly),
    Spelling::Word("charts", Fault::Charts),
    Spelling::Word("publish", Fault::Publish),
    Spelling::Word("manifest", Fault::Manifest),
    Spelling::Word("cleanup", Fault::Cleanup),
    Spelling::Counted("cleanup", Fault::CleanupAfter),
];

impl Spelling {
    fn read(&self, s: &str) -> Option<Fault> {
        match *self {
            Spelling::Word(word, fault) => (s == word).then_some(fault),
            Spelling::Counted(word, fault) => {
                let count = s.strip_prefix(word)?.strip_prefix(':')?;
                count.parse().ok().map(fault)
            }
        }
    }

    fn shown(&self) -> String {
        match self {
            Spelling::Word(word, _) => word.to_string(),
            Spelling::Counted(word, _) => format!("{word}:K"),
        }
    }
}

impl FromStr for Fault {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Fault, ParseError> {
        SPELLINGS
            .iter()
            .find_map(|spelling| spelling.read(s))
            .ok_or_else(|| {
                let shown: Vec<String> = SPELLINGS.iter().map(Spelling::shown).collect();
                format!(
                    "unknown fault {s:?}: expected {}",
                    crate::quote::or_list(&shown)
                )
                .into()
            })
    }
}

/// Aborts the process if `fault` is `here`.
pub fn point(fault: Option<&Fault>, here: Fault) {
    if fault == Some(&here) {
        std::process::abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The place of `fault`'s variant among [`Fault`]'s: a new variant must be given one here,
    /// and then a spelling for the test below to pass.
    fn variant(fault: Fault) -> usize {
        match fault {
            Fault::AfterChunks(_) => 0,
            Fault::Assembly => 1,
            Fault::Charts => 2,
            Fault::Publish => 3,
            Fault::Manifest => 4,
            Fault::Cleanup => 5,
            Fault::CleanupAfter(_) => 6,
        }
    }

    #[test]
    fn every_fault_is_spelled_read_and_offered() {
        let e = "later".parse::<Fault>().unwrap_err().to_string();
        assert_eq!(
            e,
            "unknown fault \"later\": expected chunks:K, assembly, charts, publish, manifest, cleanup or cleanup:K"
        );
        for (i, spelling) in SPELLINGS.iter().enumerate() {
            // `K` read as 3: `chunks:3`.
            let written = spelling.shown().replace('K', "3");
            let fault: Fault = written.parse().unwrap();
            assert_eq!(variant(fault), i, "{written}");
            assert!(e.contains(&spelling.shown()), "{e}");
        }
        assert_eq!("chunks:3".parse::<Fault>().unwrap(), Fault::AfterChunks(3));
        assert_eq!(
            "cleanup:2".parse::<Fault>().unwrap(),
            Fault::CleanupAfter(2)
        );
        assert_eq!("cleanup".parse::<Fault>().unwrap(), Fault::Cleanup);
        assert!("chunks:x".parse::<Fault>().is_err());
        assert!("chunks".parse::<Fault>().is_err());
    }
}
