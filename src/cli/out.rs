//! Printing for the command line. `println!` panics when stdout is closed (`ctxlab table h.jsonl
//! | head -1`); here a closed stdout ends the command quietly instead: the write returns
//! [`Closed`], which `main` turns into exit status 0 with nothing on stderr (the reader went away
//! on purpose; it is not the command's failure). A closed stderr is ignored: there is nobody
//! left to tell.

use std::fmt;
use std::io::Write as _;

/// Stdout was closed by its reader: the command stops and exits quietly.
#[derive(Debug)]
pub struct Closed;

impl fmt::Display for Closed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("standard output closed")
    }
}

impl std::error::Error for Closed {}

/// Writes to stdout; a closed pipe is [`Closed`], any other failure an error saying so.
pub fn stdout(args: fmt::Arguments<'_>) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_fmt(args).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(Closed.into()),
        Err(e) => Err(anyhow::anyhow!("cannot write to standard output: {e}")),
    }
}

/// Writes to stderr, ignoring every failure (a closed stderr has no reader to tell).
pub fn stderr(args: fmt::Arguments<'_>) {
    let _ = std::io::stderr().lock().write_fmt(args);
}

/// Whether an error is (or wraps) a closed stdout.
pub fn is_closed(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.is::<Closed>())
}

/// `print!` that stops the command quietly on a closed stdout (use inside a function returning
/// `anyhow::Result`).
#[macro_export]
#[doc(hidden)]
macro_rules! say {
    ($($arg:tt)*) => { $crate::cli::out::stdout(format_args!($($arg)*))? };
}

/// `println!` that stops the command quietly on a closed stdout.
#[macro_export]
#[doc(hidden)]
macro_rules! sayln {
    () => { $crate::cli::out::stdout(format_args!("\n"))? };
    ($($arg:tt)*) => {{
        $crate::cli::out::stdout(format_args!($($arg)*))?;
        $crate::cli::out::stdout(format_args!("\n"))?;
    }};
}

/// `eprintln!` that never panics.
#[macro_export]
#[doc(hidden)]
macro_rules! warnln {
    ($($arg:tt)*) => {{
        $crate::cli::out::stderr(format_args!($($arg)*));
        $crate::cli::out::stderr(format_args!("\n"));
    }};
}
