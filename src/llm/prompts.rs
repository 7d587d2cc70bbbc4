//! The harnesses' summary prompts, by name, or a file of the user's. Each built-in prompt is a
//! file beside this module whose leading `<!-- ... -->` comment says where its text comes from;
//! the comment is dropped before the prompt is sent, from a user's file as from a built-in one,
//! so a prompt file can say where it came from too.

use crate::error::{InputError, Result};
use std::path::Path;

/// The built-in prompts: (name, file text).
const BUILT_IN: [(&str, &str); 3] = [
    ("claude_code", include_str!("prompts/claude_code.md")),
    ("codex", include_str!("prompts/codex.md")),
    ("openhands", include_str!("prompts/openhands.md")),
];

/// The names [`by_name`] knows, for messages and help.
pub fn names() -> Vec<&'static str> {
    BUILT_IN.iter().map(|(name, _)| *name).collect()
}

/// The built-in prompt `name` names, without its source comment (borrowed: a preset that
/// costs it on every compaction allocates nothing).
pub fn built_in(name: &str) -> Option<&'static str> {
    BUILT_IN
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| without_header(text))
}

/// The prompt `name` names: `claude_code` (a labelled stand-in: Claude Code's own text is not
/// published), `codex`, `openhands`, or else the path of a file of the user's.
pub fn by_name(name: &str) -> Result<String> {
    if let Some(text) = built_in(name) {
        return Ok(text.to_string());
    }
    let path = Path::new(name);
    if !path.is_file() {
        return Err(InputError::Invalid(format!(
            "summary prompt {name:?}: expected one of {} or the path of a prompt file, and no file {name:?} exists",
            names().join(", ")
        ))
        .into());
    }
    let text = std::fs::read_to_string(path).map_err(|e| InputError::io(path, e))?;
    let prompt = without_header(&text);
    if prompt.trim().is_empty() {
        return Err(InputError::File {
            path: path.to_path_buf(),
            message: "the prompt file holds no prompt (empty, or only its leading comment)".into(),
        }
        .into());
    }
    Ok(prompt.to_string())
}

/// `text` without a leading `<!-- ... -->` comment and the line break after it.
fn without_header(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("<!--") else {
        return text;
    };
    match rest.find("-->") {
        Some(end) => {
            let after = &rest[end + 3..];
            after
                .strip_prefix("\r\n")
                .or_else(|| after.strip_prefix('\n'))
                .unwrap_or(after)
        }
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_prompts_are_sent_without_their_source_comment() {
        let codex = by_name("codex").unwrap();
        assert!(codex.starts_with("You are performing a CONTEXT CHECKPOINT COMPACTION."));
        assert!(codex.ends_with("without broad backtracking.\n"));
        let openhands = by_name("openhands").unwrap();
        assert!(openhands.starts_with("You are maintaining a context-aware state summary"));
        let claude = by_name("claude_code").unwrap();
        assert!(claude.starts_with("Write a detailed summary of the conversation so far"));
        for name in names() {
            assert!(!by_name(name).unwrap().contains("<!--"), "{name}");
        }
    }

    #[test]
    fn a_users_file_is_read_and_a_missing_one_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mine.md");
        std::fs::write(&path, "<!-- mine -->\nKeep every path.\n").unwrap();
        assert_eq!(
            by_name(path.to_str().unwrap()).unwrap(),
            "Keep every path.\n"
        );
        let e = by_name("claude").unwrap_err().to_string();
        assert!(
            e.contains("\"claude\"") && e.contains("claude_code, codex, openhands"),
            "{e}"
        );
        std::fs::write(&path, "<!-- only a comment -->\n").unwrap();
        let e = by_name(path.to_str().unwrap()).unwrap_err().to_string();
        assert!(
            e.contains("mine.md") && e.contains("holds no prompt"),
            "{e}"
        );
    }

    #[test]
    fn text_without_a_header_is_kept_whole() {
        assert_eq!(without_header("a\nb"), "a\nb");
        assert_eq!(without_header("<!-- unclosed\nx"), "<!-- unclosed\nx");
        assert_eq!(without_header("<!-- c -->\r\nx"), "x");
    }
}
