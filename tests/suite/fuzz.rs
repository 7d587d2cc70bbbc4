//! A seeded, bounded mutation test over every loader (issue 15): history JSONL, experiment
//! TOML and `--set`, the four transcript formats and shard states. Each case mutates a valid
//! input (byte flips, deletions, duplications, hostile tokens, truncation) and checks that the
//! loader returns instead of panicking, that a rejection names the file (or the `--set`), and
//! that what is accepted keeps the documented rules. `CTXLAB_FUZZ_CASES` sets the number of
//! cases (3 000 by default, for CI); the seed is fixed, so a failure reproduces.

use crate::common::*;
use ctxlab::import::{self, Format, Problems};
use ctxlab::sweep::{merge, RunOptions};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

/// xorshift64*: small, seeded, good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const TOKENS: &[&[u8]] = &[
    b"[",
    b"]",
    b"{",
    b"}",
    b"\"",
    b",",
    b":",
    b"=",
    b"\n",
    b"-0.0",
    b"1e308",
    b"-1e300",
    b"18446744073709551615",
    b"4294967295",
    b"-1",
    b"NaN",
    b"inf",
    b"null",
    b"[]",
    b"{}",
    b"\xff",
    b"\xef\xbb\xbf",
    b"\xe6\x97",
    b"[1,\"hello\",true,\"user\"]",
    b"\"role\"",
    b"\"shard\"",
    b"0",
    b"99999999999999999999999",
];

fn mutate(rng: &mut Rng, input: &[u8]) -> Vec<u8> {
    let mut v = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(v.len() + 1);
        match rng.below(6) {
            0 if !v.is_empty() => {
                let i = at.min(v.len() - 1);
                v[i] ^= 1 << rng.below(8);
            }
            1 => {
                let end = (at + 1 + rng.below(16)).min(v.len());
                v.drain(at.min(end)..end);
            }
            2 => {
                let end = (at + 1 + rng.below(64)).min(v.len());
                let piece = v[at.min(end)..end].to_vec();
                v.splice(at..at, piece);
            }
            3 => v.truncate(at),
            _ => {
                let t = TOKENS[rng.below(TOKENS.len())];
                v.splice(at..at, t.iter().copied());
            }
        }
    }
    v
}

fn cases() -> usize {
    std::env::var("CTXLAB_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000)
}

const EXP: &str = r#"
name = "fz"
seed = 3
replicates = 2
[histories]
generate = { count = 4, records = [6, 12], required_share = 0.2, seed = 9 }
[sweep]
strategies = ["recent", "required", "mask(keep_recent=1)"]
budgets = [20, 50]
false_negative = [0.0, 0.2]
[output]
dir = "out"
"#;

const SETS: &[&str] = &[
    "sweep.budgets=[25,50]",
    "replicates=3",
    "histories.generate.records=[2,9]",
    "histories.generate={ count = 2, records = [3, 5], required_share = 0.1 }",
    "sweep.strategies=[\"recent\",{ name = \"mask\", keep_recent = 2 }]",
];

/// Runs `f`, failing the test with the input when it panics.
fn no_panic<T>(what: &str, input: &[u8], f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f))
        .unwrap_or_else(|_| panic!("{what} panicked on {:?}", String::from_utf8_lossy(input)))
}

fn names(msg: &str, place: &str, input: &[u8]) {
    assert!(
        msg.contains(place),
        "rejection does not name {place}: {msg}\ninput: {:?}",
        String::from_utf8_lossy(input)
    );
}

/// Removes what a merge published into `dir` (the files its manifest lists besides the
/// shards', then the manifest), so the next merge starts from the shards alone.
fn unmerge(dir: &Path) {
    let manifest = dir.join("manifest.json");
    let Ok(text) = std::fs::read_to_string(&manifest) else {
        return;
    };
    let listed: serde_json::Value = serde_json::from_str(&text).unwrap();
    for f in listed["files"].as_array().unwrap() {
        let f = f.as_str().unwrap();
        if !f.contains("shard=") {
            let _ = std::fs::remove_file(dir.join(f));
        }
    }
    std::fs::remove_file(&manifest).unwrap();
}

#[test]
fn mutated_inputs_never_panic_and_rejections_say_where() {
    let started = std::time::Instant::now();
    let total = cases();
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(p.join("exp.toml"), EXP).unwrap();

    let history = std::fs::read(root().join("data/article12.jsonl")).unwrap();
    let fixtures = root().join("tests/fixtures/import");
    let transcripts: Vec<(Vec<u8>, Format, &str)> = [
        ("claude-session.jsonl", Format::ClaudeCode),
        ("chat.json", Format::OpenaiChat),
        ("chat.jsonl", Format::OpenaiChat),
        ("demo__demo-1.traj.json", Format::MiniSweAgent),
        ("fix-pricing.traj", Format::SweAgent),
    ]
    .into_iter()
    .map(|(f, format)| (std::fs::read(fixtures.join(f)).unwrap(), format, f))
    .collect();

    // A sharded run whose first state is mutated, then merged in-process.
    for i in 0..2 {
        let o = ctxlab(
            p,
            &[
                "sweep",
                "exp.toml",
                "-q",
                "--shard",
                &format!("{i}/2"),
                "--out",
                "s",
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let state_path = p.join("s/shards/shard=0.json");
    let state = std::fs::read(&state_path).unwrap();

    let (mut accepted, mut rejected) = (0usize, 0usize);
    for case in 0..total {
        let kind = case % 10;
        let ok = match kind {
            0..=2 => {
                let input = mutate(&mut rng, &history);
                let path = p.join("h.jsonl");
                std::fs::write(&path, &input).unwrap();
                match no_panic("history JSONL", &input, || {
                    ctxlab::history::load_jsonl(&path)
                }) {
                    Ok(hs) => {
                        for h in &hs {
                            assert!(!h.records.is_empty());
                            assert!(h.records.windows(2).all(|w| w[0].id < w[1].id));
                        }
                        true
                    }
                    Err(e) => {
                        names(&e.to_string(), "h.jsonl", &input);
                        false
                    }
                }
            }
            3 | 4 => {
                let input = mutate(&mut rng, EXP.as_bytes());
                let text = String::from_utf8_lossy(&input);
                match no_panic("experiment TOML", &input, || {
                    ctxlab::parse_any("exp.toml", &text, &[])
                }) {
                    Ok(_) => true,
                    Err(e) => {
                        names(&e.to_string(), "exp.toml", &input);
                        false
                    }
                }
            }
            5 => {
                let set = SETS[rng.below(SETS.len())];
                let input = mutate(&mut rng, set.as_bytes());
                let set = String::from_utf8_lossy(&input).into_owned();
                match no_panic("--set", &input, || {
                    ctxlab::parse_any("exp.toml", EXP, std::slice::from_ref(&set))
                }) {
                    Ok(_) => true,
                    Err(e) => {
                        let msg = e.to_string();
                        assert!(msg.contains("--set") || msg.contains("exp.toml"), "{msg}");
                        false
                    }
                }
            }
            6..=8 => {
                let (seed, format, name) = &transcripts[rng.below(transcripts.len())];
                let input = mutate(&mut rng, seed);
                let path = p.join(name);
                std::fs::write(&path, &input).unwrap();
                match no_panic("transcript", &input, || {
                    import::read(&path, *format, &mut Problems::strict())
                }) {
                    Ok(runs) => {
                        for r in &runs {
                            assert!(!r.history.records.is_empty());
                            assert!(r
                                .calls
                                .iter()
                                .all(|c| c.start <= c.end && c.end <= r.history.records.len()));
                        }
                        true
                    }
                    Err(e) => {
                        names(&e.to_string(), name, &input);
                        false
                    }
                }
            }
            _ => {
                let input = mutate(&mut rng, &state);
                std::fs::write(&state_path, &input).unwrap();
                unmerge(&p.join("s"));
                match no_panic("merge", &input, || {
                    merge::merge(&p.join("s"), &RunOptions::default())
                }) {
                    Ok(_) => true,
                    Err(e) => {
                        let msg = e.to_string();
                        assert!(msg.contains("shard"), "{msg}");
                        assert!(!p.join("s/manifest.json").exists(), "{msg}");
                        false
                    }
                }
            }
        };
        if ok {
            accepted += 1;
        } else {
            rejected += 1;
        }
    }
    eprintln!(
        "fuzz: {total} cases ({accepted} accepted, {rejected} rejected) in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(rejected > total / 4 && accepted > 0);
}
