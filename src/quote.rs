//! Quoting values in messages, the same way everywhere: a value quoted in a message is cut to
//! [`QUOTE_CHARS`] characters with an ellipsis (a 100 000-character line must not flood the
//! terminal), and a whole message to a few lines ([`bound_message`]).

/// The longest quoted value a message shows in full.
pub const QUOTE_CHARS: usize = 80;

/// An unquoted word longer than this (in bytes) is a value, not a path: it is cut too.
const LONG_WORD: usize = 512;

/// The longest line a message prints whole, in characters (a sentence of advice fits).
pub const MESSAGE_LINE_CHARS: usize = 2000;

/// The width of a quoted source line shown around its caret.
pub const SOURCE_LINE_CHARS: usize = 160;

/// The most lines a message prints.
pub const MESSAGE_LINES: usize = 40;

/// `msg` with every line cut to [`MESSAGE_LINE_CHARS`] (a quoted source line to
/// [`SOURCE_LINE_CHARS`]) and at most [`MESSAGE_LINES`] lines,
/// saying how much was cut. A quoted source line with its caret below it (the TOML parser's
/// `2 | …` / `  |    ^`) is cut around the caret's column, so what is shown is where the
/// error is.
pub fn bound_message(msg: &str) -> String {
    let lines: Vec<&str> = msg.lines().collect();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let caret = lines.get(i + 1).and_then(|next| caret_column(next));
        match (source_prefix(line), caret) {
            (Some(prefix), Some((caret_prefix, column)))
                if line.chars().count() > SOURCE_LINE_CHARS =>
            {
                let text: Vec<char> = line[prefix..].chars().collect();
                let width = SOURCE_LINE_CHARS - prefix.min(40);
                let start = column
                    .saturating_sub(width / 2)
                    .min(text.len().saturating_sub(width));
                let end = (start + width).min(text.len());
                let cut = text.len() - (end - start);
                let lead = if start > 0 { "…" } else { "" };
                let tail = if end < text.len() { "…" } else { "" };
                out.push(format!(
                    "{}{lead}{}{tail} ({cut} characters cut)",
                    &line[..prefix],
                    text[start..end].iter().collect::<String>()
                ));
                out.push(format!(
                    "{}{}^",
                    &lines[i + 1][..caret_prefix],
                    " ".repeat(column - start + lead.chars().count())
                ));
                i += 2;
                continue;
            }
            // A quoted source line stays as the caret below it points into it.
            (Some(_), _) => out.push(cut_line(line)),
            _ => out.push(cut_line(&cut_long(line))),
        }
        i += 1;
    }
    if out.len() > MESSAGE_LINES {
        let more = out.len() - MESSAGE_LINES;
        out.truncate(MESSAGE_LINES);
        out.push(format!("… ({more} more lines cut)"));
    }
    let mut text = out.join("\n");
    if msg.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// A line cut to [`MESSAGE_LINE_CHARS`] characters, saying how many were cut.
fn cut_line(line: &str) -> String {
    let count = line.chars().count();
    if count <= MESSAGE_LINE_CHARS {
        return line.to_string();
    }
    format!(
        "{}… ({} characters cut)",
        line.chars().take(MESSAGE_LINE_CHARS).collect::<String>(),
        count - MESSAGE_LINE_CHARS
    )
}

/// The length of `  12 | ` before a quoted source line.
fn source_prefix(line: &str) -> Option<usize> {
    let bar = line.find(" | ")?;
    line[..bar]
        .trim()
        .chars()
        .all(|c| c.is_ascii_digit())
        .then_some(bar + 3)
        .filter(|_| !line[..bar].trim().is_empty())
}

/// In a caret line `    |    ^`, the length of `    | ` and the caret's column after it.
fn caret_column(line: &str) -> Option<(usize, usize)> {
    let bar = line.find('|')?;
    if !line[..bar].trim().is_empty() {
        return None;
    }
    let prefix = bar + 2;
    let rest = line.get(prefix..)?;
    let column = rest.find('^')?;
    rest[..column]
        .chars()
        .all(|c| c == ' ')
        .then_some((prefix, column))
}

/// `s` cut to `max` characters, with an ellipsis when it was longer.
pub fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((at, _)) => format!("{}…", &s[..at]),
    }
}

/// A message with every quoted value (between `"` or backticks), every number written out
/// longer than [`QUOTE_CHARS`] (`1e308` printed in full is 309 digits) and every runaway
/// unquoted word cut to [`QUOTE_CHARS`] characters: serde and TOML quote the offending value
/// whole. A quote escaped inside a quoted value (`\"`) does not end it.
pub fn cut_long(msg: &str) -> String {
    if msg.len() <= QUOTE_CHARS {
        return msg.to_string();
    }
    let mut out = String::with_capacity(msg.len().min(4 * 1024));
    let mut inside = false;
    let mut rest = msg;
    loop {
        let end = quote_at(rest, inside);
        let segment = &rest[..end];
        if inside {
            out.push_str(&cut(segment, QUOTE_CHARS));
        } else {
            let mut word_start = 0;
            for (i, c) in segment.char_indices().chain([(segment.len(), ' ')]) {
                if c.is_whitespace() {
                    let word = &segment[word_start..i];
                    // Paths are unquoted words too: only a runaway word, or a number, is cut.
                    if word.len() > LONG_WORD || is_long_number(word) {
                        out.push_str(&cut(word, QUOTE_CHARS));
                    } else {
                        out.push_str(word);
                    }
                    if i < segment.len() {
                        out.push(c);
                    }
                    word_start = i + c.len_utf8();
                }
            }
        }
        if end == rest.len() {
            break;
        }
        let quote = &rest[end..end + 1];
        out.push_str(quote);
        inside = !inside;
        rest = &rest[end + 1..];
    }
    out
}

/// Where the next quote (`"` or a backtick) in `rest` is, its length if none; inside a quoted
/// value a `"` escaped with a backslash is part of the value.
fn quote_at(rest: &str, inside: bool) -> usize {
    let bytes = rest.as_bytes();
    let mut from = 0;
    while let Some(at) = rest[from..].find(['"', '`']).map(|i| i + from) {
        if inside && bytes[at] == b'"' && at > 0 && bytes[at - 1] == b'\\' {
            from = at + 1;
            continue;
        }
        return at;
    }
    rest.len()
}

/// Whether `word` is a number longer than [`QUOTE_CHARS`] characters (a sign, digits, a point,
/// an exponent; punctuation after it allowed): a value, however it is printed.
fn is_long_number(word: &str) -> bool {
    let number = word.trim_end_matches([',', ';', ':', '.', ')']);
    number.chars().count() > QUOTE_CHARS
        && number.chars().any(|c| c.is_ascii_digit())
        && number
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E' | '_'))
}

/// Names a message or a help text offers, as a sentence lists them: `a, b or c` (`a` alone,
/// `a or b` for two, empty for none).
pub fn or_list<S: AsRef<str>>(names: &[S]) -> String {
    sentence_list(names, "or")
}

/// Names a message lists all of: `a, b and c`.
pub fn and_list<S: AsRef<str>>(names: &[S]) -> String {
    sentence_list(names, "and")
}

fn sentence_list<S: AsRef<str>>(names: &[S], last_word: &str) -> String {
    match names.split_last() {
        Some((last, [])) => last.as_ref().to_string(),
        Some((last, rest)) => {
            let rest: Vec<&str> = rest.iter().map(AsRef::as_ref).collect();
            format!("{} {last_word} {}", rest.join(", "), last.as_ref())
        }
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_message_lines_are_cut_around_the_caret() {
        let source = format!("seed = [{}", "3, ".repeat(1000));
        let caret = " ".repeat(source.len());
        let msg = format!("TOML parse error at line 2, column 3009\n    |\n  2 | {source}\n    | {caret}^\n  unclosed array, expected `]`\n");
        let bounded = bound_message(&msg);
        let lines: Vec<&str> = bounded.lines().collect();
        assert_eq!(lines.len(), 5, "{bounded}");
        assert!(
            lines[2].starts_with("  2 | … 3, 3, ") && lines[2].ends_with(" (2854 characters cut)"),
            "{}",
            lines[2]
        );
        // The caret stays under the end of the line shown.
        let at = lines[3].find('^').unwrap();
        assert_eq!(lines[2].chars().nth(at).unwrap(), ' ');
        assert!(lines[3].len() < 200);
        assert_eq!(lines[4], "  unclosed array, expected `]`");
        // A long plain line (of short words: a runaway word is cut as a value), and too many
        // lines.
        assert_eq!(
            bound_message(&"x ".repeat(1500)),
            format!("{}… (1000 characters cut)", "x ".repeat(1000))
        );
        assert_eq!(
            bound_message(&"x".repeat(3000)),
            format!("{}…", "x".repeat(80))
        );
        let many = bound_message(&"l\n".repeat(100));
        assert!(many.ends_with("… (60 more lines cut)\n"), "{many}");
        assert_eq!(bound_message("short\nlines"), "short\nlines");
    }

    #[test]
    fn long_values_are_cut_short_ones_kept() {
        assert_eq!(cut("abc", 2), "ab…");
        assert_eq!(cut("ab", 2), "ab");
        let long = "x".repeat(100_000);
        let msg = cut_long(&format!("unknown kind \"{long}\" (and `{long}`) {long}"));
        let x80 = "x".repeat(80);
        assert_eq!(
            msg,
            format!("unknown kind \"{x80}…\" (and `{x80}…`) {x80}…")
        );
        let spaced = "a b ".repeat(100);
        assert!(cut_long(&format!("v \"{spaced}\"")).chars().count() < 90);
        assert_eq!(cut_long("short \"value\""), "short \"value\"");
    }

    #[test]
    fn numbers_written_out_are_values_and_cut_too() {
        // `1e308` printed as f64's Display: a 1 and 308 zeros.
        let big = format!("1{}", "0".repeat(308));
        let msg = format!("budget {big} is out of range: expected a percentage from 0 to 100");
        let cut = cut_long(&msg);
        assert_eq!(
            cut,
            format!(
                "budget 1{}… is out of range: expected a percentage from 0 to 100",
                "0".repeat(79)
            )
        );
        // A path longer than a quote stays whole; a short number too.
        let path = format!("/tmp/{}/h.jsonl", "d".repeat(120));
        assert_eq!(
            cut_long(&format!("{path}: budget 101 is out")),
            format!("{path}: budget 101 is out")
        );
        // Every line of an error message is cut so (the TOML source lines excepted).
        assert!(bound_message(&msg).chars().count() < 160);
        // An escaped quote inside a quoted value does not end it.
        let inner = format!("a\\\"{}", "b".repeat(100));
        let quoted = cut_long(&format!("value \"{inner}\" and then some words after it"));
        assert!(
            quoted.ends_with("\" and then some words after it"),
            "{quoted}"
        );
    }

    #[test]
    fn or_lists_read_as_a_sentence() {
        assert_eq!(or_list(&["a", "b", "c"]), "a, b or c");
        assert_eq!(or_list(&["a", "b"]), "a or b");
        assert_eq!(or_list(&["a"]), "a");
        assert_eq!(or_list::<&str>(&[]), "");
        assert_eq!(and_list(&["a", "b", "c"]), "a, b and c");
    }
}
