//! Errors about the user's input: each names the file, the line or key, and what was expected.

use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum InputError {
    #[error("{}: cannot read or write", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}:{line}: {}", path.display(), crate::quote::cut_long(message))]
    Line {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{}: {}", path.display(), crate::quote::cut_long(message))]
    File { path: PathBuf, message: String },
    #[error(
        "{origin}: key `{}`: {}",
        crate::quote::cut(key, crate::quote::QUOTE_CHARS),
        crate::quote::cut_long(message)
    )]
    Key {
        origin: String,
        key: String,
        message: String,
    },
    #[error("{}", crate::quote::cut_long(.0))]
    Invalid(String),
    /// Several files of a batch, one line each (each already cut as its own error is).
    #[error("{0}")]
    Batch(String),
}

impl InputError {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        InputError::Io {
            path: path.into(),
            source,
        }
    }

    pub fn line(path: impl Into<PathBuf>, line: usize, message: impl Into<String>) -> Self {
        InputError::Line {
            path: path.into(),
            line,
            message: message.into(),
        }
    }

    pub fn key(
        origin: impl Into<String>,
        key: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        InputError::Key {
            origin: origin.into(),
            key: key.into(),
            message: message.into(),
        }
    }
}

/// A value that does not parse (a strategy spec, a shard, an override): the message says what
/// was given and what was expected; the caller adds where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{0}")]
pub struct ParseError(pub String);

impl From<String> for ParseError {
    fn from(message: String) -> Self {
        ParseError(message)
    }
}

impl From<&str> for ParseError {
    fn from(message: &str) -> Self {
        ParseError(message.to_string())
    }
}

/// The refusal of a parameter given twice, the same in every spec grammar (strategies,
/// caches, noise models, summarisers, label rules, cost models): which value was meant cannot
/// be told, so neither is taken.
pub fn given_twice(what: &str, text: &str, key: &str) -> String {
    format!("{what} {text:?}: parameter `{key}` is given twice; give each parameter once")
}

/// A chart the plotting backend could not draw.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{0}")]
pub struct DrawError(pub String);

impl From<String> for DrawError {
    fn from(message: String) -> Self {
        DrawError(message)
    }
}

/// Why the library could not finish a run, a merge or a chart.
#[derive(Debug, Error)]
pub enum Error {
    /// The user's input is wrong: an experiment, a history, a results folder's table.
    #[error(transparent)]
    Input(#[from] InputError),
    /// A file could not be read or written.
    #[error("{}: cannot {doing}: {source}", path.display())]
    Io {
        path: PathBuf,
        doing: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// A table could not be encoded or decoded (Parquet, CSV, JSON).
    #[error("{}: cannot {doing}: {message}", path.display())]
    Table {
        path: PathBuf,
        doing: &'static str,
        message: String,
    },
    /// The run declines to go on: a folder in use or not ours, an unfinished run, a resume
    /// with other settings, shards that do not fit together. The message says what to do.
    #[error("{0}")]
    Refused(String),
    /// A chart could not be drawn.
    #[error("drawing {chart}: {message}")]
    Draw { chart: String, message: String },
    /// A model endpoint gave no answer: absent, unreachable, an error status, a timeout.
    #[error("{url}: {message}")]
    Endpoint { url: String, message: String },
    /// An external strategy's program failed to start, crashed, hung, or gave an answer that
    /// is refused: the message names the cell, the request and what was wrong, then the end
    /// of the program's standard error.
    #[error("{0}")]
    External(String),
}

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Refuses with a formatted message: `refuse!("{}: in use", dir.display())`.
macro_rules! refuse {
    ($($arg:tt)*) => {
        return Err($crate::error::Error::Refused(format!($($arg)*)))
    };
}
pub(crate) use refuse;

/// Names the file an I/O or encoding failure happened on.
pub trait At<T> {
    fn at(self, path: &std::path::Path, doing: &'static str) -> Result<T>;
}

impl<T> At<T> for std::io::Result<T> {
    fn at(self, path: &std::path::Path, doing: &'static str) -> Result<T> {
        self.map_err(|source| Error::Io {
            path: path.to_path_buf(),
            doing,
            source,
        })
    }
}

macro_rules! encoding_errors {
    ($($t:ty),*) => {$(
        impl<T> At<T> for std::result::Result<T, $t> {
            fn at(self, path: &std::path::Path, doing: &'static str) -> Result<T> {
                self.map_err(|e| Error::Table {
                    path: path.to_path_buf(),
                    doing,
                    message: e.to_string(),
                })
            }
        }
    )*};
}

encoding_errors!(polars::prelude::PolarsError, csv::Error, serde_json::Error);

impl From<ParseError> for String {
    fn from(e: ParseError) -> String {
        e.0
    }
}

/// The message, for reading and matching (`e.contains("expected")`).
impl std::ops::Deref for ParseError {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl PartialEq<&str> for ParseError {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}
