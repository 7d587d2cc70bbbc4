//! A bad session configuration value, named by its key: what every check of a session's
//! configuration (its window, prices, layers) reports.

use std::fmt;

/// A bad configuration value: the key as a config file spells it, and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    pub key: &'static str,
    pub message: String,
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.key, self.message)
    }
}

impl std::error::Error for Invalid {}

pub(crate) fn invalid(key: &'static str, message: impl Into<String>) -> Invalid {
    Invalid {
        key,
        message: message.into(),
    }
}
