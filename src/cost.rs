//! Cost models: the size of a text, and of the separator between two records of a context.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;
use tiktoken_rs::CoreBPE;

/// How the size of a record is counted.
///
/// Written and parsed as a spec: `chars`, `bytes`, `approx-tokens`, `tokens` or
/// `tokens(encoding=cl100k_base, overhead=3, scale=1.16)`; `Display` gives the canonical spec, which parses
/// back to the same model (experiment files and tables use that form).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(try_from = "String", into = "String")]
pub enum CostModel {
    /// Unicode scalar values, as Python's `len()` counts a `str` (not UTF-8 bytes).
    #[default]
    Chars,
    /// UTF-8 bytes.
    Bytes,
    /// `ceil(chars / 4)` per record, a common rule of thumb for tokens.
    ApproxTokens,
    /// Real BPE tokens of the text under `encoding`, plus `overhead` tokens per record for the
    /// message framing a chat API adds around every message, times `scale` (in thousandths, so
    /// the model stays hashable): a provider whose tokenizer is not shipped here (Gemini,
    /// Claude) counts about `scale` of its tokens per o200k token, the slope `ctxlab calibrate`
    /// fits (about 1.16 for Gemini on the shared runs), so windows are in the provider's tokens.
    Tokens {
        encoding: Encoding,
        overhead: u32,
        scale_milli: u32,
    },
}

/// A BPE vocabulary shipped inside the `tiktoken-rs` crate (no download).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Encoding {
    /// GPT-4o and later.
    #[default]
    O200kBase,
    /// GPT-4 and GPT-3.5-turbo.
    Cl100kBase,
}

impl Encoding {
    pub const ALL: [Encoding; 2] = [Encoding::O200kBase, Encoding::Cl100kBase];

    pub fn as_str(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }

    /// The shared encoder, built on first use: building one parses a vocabulary of 100–200 k
    /// entries, far too dear to repeat per record.
    fn encoder(self) -> &'static CoreBPE {
        static O200K: OnceLock<CoreBPE> = OnceLock::new();
        static CL100K: OnceLock<CoreBPE> = OnceLock::new();
        // The vocabularies are compiled into the crate, so building cannot fail on any input.
        match self {
            Encoding::O200kBase => O200K
                .get_or_init(|| tiktoken_rs::o200k_base().expect("bundled o200k_base vocabulary")),
            Encoding::Cl100kBase => CL100K.get_or_init(|| {
                tiktoken_rs::cl100k_base().expect("bundled cl100k_base vocabulary")
            }),
        }
    }

    /// Number of tokens of `text`. Special-token markers such as `<|endoftext|>` that occur in a
    /// transcript are counted as the ordinary text they are.
    ///
    /// The text is encoded in pieces of about [`PIECE`] bytes, so the time is linear in its
    /// length and the memory bounded (BPE slows faster than linearly on one long word). A
    /// piece ends before a space that follows a non-space, where the encoder's own
    /// pre-tokenizer splits anyway, so counts equal those of the whole text; only a run of
    /// more than [`MAX_PIECE`] bytes without such a space is cut mid-word.
    pub fn count(self, text: &str) -> u64 {
        let bpe = self.encoder();
        pieces(text)
            .map(|p| bpe.encode_ordinary(p).len() as u64)
            .sum()
    }
}

/// Bytes of text encoded at once, at least (unless the text is shorter).
const PIECE: usize = 8 * 1024;
/// Bytes of text encoded at once, at most.
const MAX_PIECE: usize = 64 * 1024;

/// `text` cut into pieces for the encoder (see [`Encoding::count`]).
fn pieces(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let cut = if rest.len() <= MAX_PIECE {
            rest.len()
        } else {
            let window = &rest.as_bytes()[PIECE..MAX_PIECE];
            let at_word_gap = |i: usize| {
                let at = PIECE + i;
                rest.is_char_boundary(at)
                    && rest[..at]
                        .chars()
                        .next_back()
                        .is_some_and(|c| !c.is_whitespace())
            };
            match window
                .iter()
                .enumerate()
                .find(|&(i, &b)| b == b' ' && at_word_gap(i))
            {
                Some((i, _)) => PIECE + i,
                None => (0..=MAX_PIECE)
                    .rev()
                    .find(|&i| rest.is_char_boundary(i))
                    .unwrap_or(rest.len()),
            }
        };
        let (piece, tail) = rest.split_at(cut);
        rest = tail;
        Some(piece)
    })
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Encoding {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Encoding::ALL
            .into_iter()
            .find(|e| e.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown encoding {s:?}, expected one of {}",
                    Encoding::ALL.map(Encoding::as_str).join(", ")
                )
            })
    }
}

/// Tokens added per record under `tokens` unless `overhead=` says otherwise: OpenAI's published
/// count for its chat format (`<|start|>`, the role, `<|message|>` … `<|end|>` around each
/// message is 3 tokens for the models that use these encodings).
pub const DEFAULT_TOKEN_OVERHEAD: u32 = 3;

/// `scale` of the token model unless the spec says otherwise: the counts as the encoding gives
/// them.
pub const UNSCALED: u32 = 1000;

/// The largest `scale` a spec may give: no tokenizer counts a hundred times another's tokens.
const MAX_SCALE: f64 = 100.0;

impl CostModel {
    pub const NAMES: [&'static str; 4] = ["chars", "bytes", "approx-tokens", "tokens"];

    /// `tokens` with the default encoding and overhead.
    pub const TOKENS: CostModel = CostModel::Tokens {
        encoding: Encoding::O200kBase,
        overhead: DEFAULT_TOKEN_OVERHEAD,
        scale_milli: UNSCALED,
    };

    /// The cost of one text.
    pub fn cost(self, text: &str) -> u64 {
        match self {
            CostModel::Chars => text.chars().count() as u64,
            CostModel::Bytes => text.len() as u64,
            CostModel::ApproxTokens => (text.chars().count() as u64).div_ceil(4),
            CostModel::Tokens {
                encoding,
                overhead,
                scale_milli,
            } => scaled(encoding.count(text) + overhead as u64, scale_milli),
        }
    }

    /// The least a non-empty text can cost: one character, byte or token (a tokenizer encodes
    /// any non-empty text in one token at least), with the per-record overhead and scale.
    pub fn least_nonempty(self) -> u64 {
        match self {
            CostModel::Chars | CostModel::Bytes | CostModel::ApproxTokens => 1,
            CostModel::Tokens {
                overhead,
                scale_milli,
                ..
            } => scaled(1 + overhead as u64, scale_milli),
        }
    }

    /// The cost of the gap between two records of a context. Records are joined by `"\n"`,
    /// which is one char and one byte; under `approx-tokens` the newline is folded into the
    /// per-record rounding up, and under `tokens` into the per-record overhead (a chat API
    /// frames messages with its own tokens, it does not join them with a newline), so the gap
    /// is free.
    pub fn separator(self) -> u64 {
        match self {
            CostModel::Chars | CostModel::Bytes => 1,
            CostModel::ApproxTokens | CostModel::Tokens { .. } => 0,
        }
    }

    /// The model's name (`tokens` whatever its parameters); `Display` gives the full spec.
    pub fn as_str(self) -> &'static str {
        match self {
            CostModel::Chars => "chars",
            CostModel::Bytes => "bytes",
            CostModel::ApproxTokens => "approx-tokens",
            CostModel::Tokens { .. } => "tokens",
        }
    }
}

impl fmt::Display for CostModel {
    /// The canonical spec: parameters at their default are left out, so the default token
    /// model reads `tokens`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())?;
        if let CostModel::Tokens {
            encoding,
            overhead,
            scale_milli,
        } = *self
        {
            let mut params = Vec::new();
            if encoding != Encoding::default() {
                params.push(format!("encoding={encoding}"));
            }
            if overhead != DEFAULT_TOKEN_OVERHEAD {
                params.push(format!("overhead={overhead}"));
            }
            if scale_milli != UNSCALED {
                params.push(format!("scale={}", f64::from(scale_milli) / 1000.0));
            }
            if !params.is_empty() {
                write!(f, "({})", params.join(", "))?;
            }
        }
        Ok(())
    }
}

impl FromStr for CostModel {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let text = s.trim();
        let (name, params) = match text.split_once('(') {
            None => (text, None),
            Some((name, rest)) => {
                let inner = rest.strip_suffix(')').ok_or_else(|| {
                    format!(
                        "cost model {text:?}: expected `name(key=value, ...)` with a closing `)`"
                    )
                })?;
                (name.trim(), Some(inner))
            }
        };
        let model = match name {
            "chars" => CostModel::Chars,
            "bytes" => CostModel::Bytes,
            "approx-tokens" => CostModel::ApproxTokens,
            "tokens" => CostModel::TOKENS,
            _ => {
                return Err(format!(
                    "unknown cost model {name:?}, expected one of {}",
                    CostModel::NAMES.join(", ")
                ))
            }
        };
        let Some(params) = params else {
            return Ok(model);
        };
        let CostModel::Tokens {
            mut encoding,
            mut overhead,
            mut scale_milli,
        } = model
        else {
            return Err(format!("cost model {text:?}: `{name}` takes no parameters"));
        };
        let mut seen: Vec<&str> = Vec::new();
        for part in params.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = part.split_once('=').ok_or_else(|| {
                format!("cost model {text:?}: parameter {part:?} should read `key=value`")
            })?;
            if seen.contains(&key.trim()) {
                return Err(crate::error::given_twice("cost model", text, key.trim()));
            }
            seen.push(key.trim());
            let value = value.trim().trim_matches('"');
            match key.trim() {
                "encoding" => {
                    encoding = value
                        .parse()
                        .map_err(|e| format!("cost model {text:?}: {e}"))?
                }
                "overhead" => {
                    overhead = value.parse().map_err(|_| {
                        format!(
                            "cost model {text:?}: `overhead` expects a whole number ≥ 0 of tokens per record, found {value:?}"
                        )
                    })?
                }
                "scale" => scale_milli = parse_scale(text, value)?,
                other => {
                    return Err(format!(
                        "cost model {text:?}: unknown parameter `{other}` (known: encoding, overhead, scale)"
                    ))
                }
            }
        }
        Ok(CostModel::Tokens {
            encoding,
            overhead,
            scale_milli,
        })
    }
}

/// `count × scale`, rounded to the nearest whole token (halves up).
fn scaled(count: u64, scale_milli: u32) -> u64 {
    if scale_milli == UNSCALED {
        return count;
    }
    ((u128::from(count) * u128::from(scale_milli) + 500) / 1000) as u64
}

/// `scale=F`: a number in (0, 100], kept to thousandths (the precision `calibrate` prints).
fn parse_scale(spec: &str, value: &str) -> Result<u32, String> {
    let expected = || {
        format!(
            "cost model {spec:?}: `scale` expects a number above 0 and at most {MAX_SCALE}, the provider's tokens per counted token (e.g. 1.16), found {value:?}"
        )
    };
    let f: f64 = value.parse().map_err(|_| expected())?;
    if !(f.is_finite() && f > 0.0 && f <= MAX_SCALE) {
        return Err(expected());
    }
    let milli = (f * 1000.0).round();
    if milli < 1.0 {
        return Err(expected());
    }
    Ok(milli as u32)
}

impl TryFrom<String> for CostModel {
    type Error = String;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<CostModel> for String {
    fn from(m: CostModel) -> String {
        m.to_string()
    }
}

/// The cost of texts joined by the model's separator (0 for no texts).
pub fn joined_cost<'a>(model: CostModel, texts: impl IntoIterator<Item = &'a str>) -> u64 {
    let mut n = 0u64;
    let mut sum = 0u64;
    for t in texts {
        sum += model.cost(t);
        n += 1;
    }
    sum + model.separator() * n.saturating_sub(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_nonempty_text_costs_less_than_the_least() {
        let models: Vec<CostModel> = [
            "chars",
            "bytes",
            "approx-tokens",
            "tokens",
            "tokens(encoding=o200k_base, overhead=3, scale=1.16)",
            "tokens(overhead=0, scale=0.5)",
        ]
        .iter()
        .map(|m| m.parse().unwrap())
        .collect();
        // By hand: one character, byte or token; o200k with 3 of overhead at 1.16: round(4 ×
        // 1.16) = 5; no overhead at 0.5: round(1 × 0.5) = 1 (half up).
        let least: Vec<u64> = models.iter().map(|m| m.least_nonempty()).collect();
        assert_eq!(least[..3], [1, 1, 1]);
        assert_eq!(least[4], 5);
        assert_eq!(least[5], 1);
        for m in &models {
            assert_eq!(
                m.cost("a"),
                m.least_nonempty(),
                "{m}: one letter is the least"
            );
            for text in [
                "}",
                "日",
                "a b",
                "    x",
                "\u{1F980}",
                "fn main() { println!(); }",
            ] {
                assert!(m.cost(text) >= m.least_nonempty(), "{m}: {text:?}");
            }
        }
    }

    #[test]
    fn ten_japanese_characters_cost_ten_chars_and_thirty_bytes() {
        let text = "日本語のテキストです";
        assert_eq!(text.chars().count(), 10);
        assert_eq!(CostModel::Chars.cost(text), 10);
        assert_eq!(CostModel::Bytes.cost(text), 30);
        assert_eq!(CostModel::ApproxTokens.cost(text), 3);
    }

    #[test]
    fn joined_cost_counts_one_separator_per_gap() {
        assert_eq!(joined_cost(CostModel::Chars, []), 0);
        assert_eq!(joined_cost(CostModel::Chars, ["abc"]), 3);
        assert_eq!(
            joined_cost(CostModel::Chars, ["abc", "de", "é"]),
            3 + 2 + 1 + 2
        );
        assert_eq!(joined_cost(CostModel::ApproxTokens, ["abcde", "a"]), 2 + 1);
    }

    #[test]
    fn names_parse_back() {
        for name in CostModel::NAMES {
            assert_eq!(name.parse::<CostModel>().unwrap().as_str(), name);
        }
        assert!("tokens?"
            .parse::<CostModel>()
            .unwrap_err()
            .contains("expected one of"));
    }

    #[test]
    fn token_specs_parse_back_and_leave_defaults_out() {
        assert_eq!("tokens".parse::<CostModel>().unwrap(), CostModel::TOKENS);
        let m: CostModel = " tokens( encoding = cl100k_base , overhead=0 )"
            .parse()
            .unwrap();
        assert_eq!(
            m,
            CostModel::Tokens {
                encoding: Encoding::Cl100kBase,
                overhead: 0,
                scale_milli: UNSCALED,
            }
        );
        assert_eq!(m.to_string(), "tokens(encoding=cl100k_base, overhead=0)");
        assert_eq!(m.to_string().parse::<CostModel>().unwrap(), m);
        assert_eq!(CostModel::TOKENS.to_string(), "tokens");
        assert_eq!(
            "tokens(encoding=o200k_base, overhead=3)"
                .parse::<CostModel>()
                .unwrap()
                .to_string(),
            "tokens"
        );
        assert_eq!(
            "tokens(overhead=7)"
                .parse::<CostModel>()
                .unwrap()
                .to_string(),
            "tokens(overhead=7)"
        );
        let scaled: CostModel = "tokens(scale=1.16)".parse().unwrap();
        assert_eq!(scaled.to_string(), "tokens(scale=1.16)");
        assert_eq!(scaled.to_string().parse::<CostModel>().unwrap(), scaled);
        assert_eq!(
            "tokens(scale=1)".parse::<CostModel>().unwrap(),
            CostModel::TOKENS
        );
        // Serde uses the same spec, so experiment files write `cost = "tokens(overhead=4)"`.
        let json = serde_json::to_string(&m).unwrap();
        assert_eq!(json, "\"tokens(encoding=cl100k_base, overhead=0)\"");
        assert_eq!(serde_json::from_str::<CostModel>(&json).unwrap(), m);
        assert_eq!(
            serde_json::from_str::<CostModel>("\"approx-tokens\"").unwrap(),
            CostModel::ApproxTokens
        );
    }

    #[test]
    fn bad_token_specs_say_what_was_expected() {
        let cases = [
            (
                "tokens(encoding=p50k)",
                "expected one of o200k_base, cl100k_base",
            ),
            ("tokens(overhead=-1)", "whole number"),
            (
                "tokens(size=3)",
                "unknown parameter `size` (known: encoding, overhead, scale)",
            ),
            ("tokens(overhead)", "key=value"),
            ("tokens(overhead=3", "closing"),
            ("chars(x=1)", "takes no parameters"),
        ];
        for (spec, what) in cases {
            let err = spec.parse::<CostModel>().unwrap_err();
            assert!(err.contains(what), "{spec}: {err}");
        }
    }

    #[test]
    fn a_scale_multiplies_the_count_and_rounds_to_the_nearest_token() {
        // 6 o200k tokens (the cookbook's count, below) + 3 of overhead = 9.
        let text = "tiktoken is great!";
        assert_eq!(CostModel::TOKENS.cost(text), 9);
        let at = |spec: &str| spec.parse::<CostModel>().unwrap().cost(text);
        assert_eq!(at("tokens(scale=1.16)"), 10); // 10.44
        assert_eq!(at("tokens(scale=1.5)"), 14); // 13.5 rounds up
        assert_eq!(at("tokens(scale=0.5)"), 5); // 4.5 rounds up
        for bad in [
            "tokens(scale=0)",
            "tokens(scale=-1)",
            "tokens(scale=x)",
            "tokens(scale=101)",
            "tokens(scale=0.0001)",
        ] {
            let e = bad.parse::<CostModel>().unwrap_err();
            assert!(e.contains("`scale` expects a number above 0"), "{bad}: {e}");
        }
    }

    #[test]
    fn long_texts_are_counted_in_pieces_with_the_same_counts() {
        let words = [
            "fn",
            "main()",
            "{",
            "let",
            "x:",
            "u64",
            "=",
            "42;",
            "\n",
            "  ",
            "日本語",
            "résumé,",
            "/usr/lib",
            "'s",
            "\n\n",
            "...",
            "\t",
        ];
        let mut text = String::new();
        let mut k = 7usize;
        while text.len() < 300_000 {
            k = k
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            text.push_str(words[(k >> 33) % words.len()]);
            if !(k >> 20).is_multiple_of(3) {
                text.push(' ');
            }
        }
        assert!(pieces(&text).count() > 10);
        assert_eq!(pieces(&text).collect::<String>(), text);
        for e in Encoding::ALL {
            let whole = e.encoder().encode_ordinary(&text).len() as u64;
            assert_eq!(e.count(&text), whole, "{e}");
        }
        // No space at all: cut every MAX_PIECE bytes, so the time stays linear.
        let word = "x".repeat(5 * MAX_PIECE + 3);
        assert_eq!(pieces(&word).count(), 6);
    }

    #[test]
    fn tokens_count_bpe_tokens_plus_the_overhead() {
        // Counts published in OpenAI's tiktoken cookbook for these strings and encodings.
        let o200k = |t| Encoding::O200kBase.count(t);
        let cl100k = |t| Encoding::Cl100kBase.count(t);
        assert_eq!(cl100k("tiktoken is great!"), 6);
        assert_eq!(o200k("tiktoken is great!"), 6);
        assert_eq!(cl100k("antidisestablishmentarianism"), 6);
        assert_eq!(cl100k("2 + 2 = 4"), 7);
        assert_eq!(cl100k("お誕生日おめでとう"), 9);
        assert_eq!(o200k("お誕生日おめでとう"), 8);
        assert_eq!(o200k(""), 0);
        // A special-token marker inside a transcript is ordinary text, several tokens long.
        assert!(o200k("<|endoftext|>") > 1);
        let m = CostModel::TOKENS;
        assert_eq!(m.cost("お誕生日おめでとう"), 8 + 3);
        assert_eq!(m.cost(""), 3);
        assert_eq!(m.separator(), 0);
        assert_eq!(joined_cost(m, ["tiktoken is great!", ""]), 6 + 3 + 3);
    }
}
