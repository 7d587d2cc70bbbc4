//! The names a help text offers come from the registries: each such help names every
//! registered variant (the ones the option takes), in the registry's order, so a new cache,
//! cost model or label rule cannot leave a stale list behind.

use super::Cli;
use crate::cost::CostModel;
use crate::history::import::LabelRules;
use crate::session::CacheKind;
use clap::CommandFactory;

/// The help of `--option` of `ctxlab subcommand`.
fn help(subcommand: &str, option: &str) -> String {
    let cli = Cli::command();
    let command = cli
        .find_subcommand(subcommand)
        .unwrap_or_else(|| panic!("no subcommand {subcommand}"));
    let arg = command
        .get_arguments()
        .find(|a| a.get_long() == Some(option))
        .unwrap_or_else(|| panic!("{subcommand} has no --{option}"));
    arg.get_help().expect("a help text").to_string()
}

/// Asserts that `help` lists `names` as a sentence does, in their order.
fn lists(help: &str, names: &[&str]) {
    let listed = crate::quote::or_list(names);
    assert!(help.contains(&listed), "{help:?} does not list {listed:?}");
}

#[test]
fn cache_options_name_every_cache_they_take() {
    lists(&help("session", "cache"), &CacheKind::NAMES);
    let not_recorded: Vec<&str> = CacheKind::ALL
        .into_iter()
        .filter(|&k| k != CacheKind::Recorded)
        .map(CacheKind::as_str)
        .collect();
    let calibrate = help("calibrate", "cache");
    lists(&calibrate, &not_recorded);
    // The recorded share is printed whatever the cache: `--cache recorded` is refused.
    assert!(!calibrate.contains("recorded:"));
    let providers = CacheKind::names_where(CacheKind::fits);
    assert_eq!(providers, "anthropic, openai, gemini");
    assert!(help("calibrate", "fit-cache").contains(&format!("({providers})")));
}

#[test]
fn cost_options_name_every_cost_model() {
    for subcommand in ["session", "inspect", "table"] {
        lists(&help(subcommand, "cost"), &CostModel::NAMES);
    }
    assert_eq!(
        help("inspect", "cost"),
        "Cost model: chars, bytes, approx-tokens or tokens"
    );
}

#[test]
fn label_option_names_every_rule() {
    let label = help("import", "label");
    assert!(label.contains(&LabelRules::NAMES.join(", ")), "{label}");
    assert_eq!(
        label,
        "Label rules setting `required`, comma-separated: instructions, errors, hindsight (or all, none)"
    );
}
