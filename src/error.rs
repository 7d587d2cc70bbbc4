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
    #[error("{}:{line}: {message}", path.display())]
    Line {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{}: {message}", path.display())]
    File { path: PathBuf, message: String },
    #[error("{origin}: key `{key}`: {message}")]
    Key {
        origin: String,
        key: String,
        message: String,
    },
    #[error("{0}")]
    Invalid(String),
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
