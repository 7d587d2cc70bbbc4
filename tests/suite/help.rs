//! `--help` is complete on its own: every subcommand says what it does and every option says
//! what it is for, so a reader never needs the guide to learn what a flag means.

use clap::CommandFactory;

/// Each subcommand with what its help lacks: no about line, or args without a help line.
fn gaps(command: &clap::Command, path: &str, out: &mut Vec<String>) {
    for sub in command.get_subcommands() {
        if sub.get_name() == "help" {
            continue;
        }
        let name = format!("{path} {}", sub.get_name());
        if sub
            .get_about()
            .is_none_or(|a| a.to_string().trim().is_empty())
        {
            out.push(format!("`{name}`: no about line"));
        }
        for arg in sub.get_arguments() {
            let id = arg.get_id().as_str();
            if id == "help" || id == "version" {
                continue;
            }
            if arg
                .get_help()
                .is_none_or(|h| h.to_string().trim().is_empty())
            {
                out.push(format!("`{name}`: `{id}` has no help"));
            }
        }
        gaps(sub, &name, out);
    }
}

#[test]
fn every_subcommand_and_option_has_help() {
    let cli = ctxlab::cli::Cli::command();
    cli.clone().debug_assert();
    let mut missing = Vec::new();
    gaps(&cli, "ctxlab", &mut missing);
    assert!(
        missing.is_empty(),
        "--help is incomplete:\n{}",
        missing.join("\n")
    );
}
