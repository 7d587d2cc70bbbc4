use clap::Parser;
use ctxlab::cli::{out, Cli};
use std::process::ExitCode;

fn main() -> ExitCode {
    ctxlab::cli::allocator::tune();
    match Cli::parse().command.run() {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of stdout went away (`| head`): what it wanted it has; exit quietly.
        Err(e) if out::is_closed(&e) => ExitCode::SUCCESS,
        Err(e) => {
            // However long what it quotes, a message stays a few lines (cut where it errs).
            let message = ctxlab::quote::bound_message(&format!("{e:#}"));
            ctxlab::warnln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
