//! A seeded, bounded mutation test over every loader (issue 15): history JSONL, experiment
//! TOML and `--set`, the four transcript formats and shard states. Each case mutates a valid
//! input (byte flips, deletions, duplications, hostile tokens, truncation) and checks that the
//! loader returns instead of panicking, that a rejection names the file (or the `--set`), and
//! that what is accepted keeps the documented rules. `CTXLAB_FUZZ_CASES` sets the number of
//! cases (3 000 by default, for CI); the seed is fixed, so a failure reproduces. A second test
//! runs the binary itself as a child under a memory and a time limit on mutated flags files,
//! Batch files, answer-cache entries, merge's rows files, oversized files and overlong lines,
//! `--out` targets that exist (files, FIFOs, links, folders) and batches of transcripts some of
//! which are bad (the refusal must name every bad one). The transcript seeds include timestamps,
//! parallel tool calls (one response over two lines, a result timed between them) and images.

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
    "é".as_bytes(),
    "日本".as_bytes(),
    b"\"timestamp\":\"2026-02-07T08:19:41.700Z\",",
    b"\"id\":\"m1\"",
];

/// A Claude Code session with timestamps, one response logged over two lines (two `tool_use`
/// blocks sharing `message.id` m1) whose first result is timed between them, and an image.
const PARALLEL: &str = r#"{"type":"user","timestamp":"2026-02-07T08:19:30.000Z","message":{"role":"user","content":[{"type":"text","text":"Read a.rs and b.rs"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}]}}
{"type":"assistant","timestamp":"2026-02-07T08:19:41.712Z","message":{"id":"m1","model":"claude-opus-4-5-20251101","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"a.rs"}}],"usage":{"input_tokens":10,"cache_creation_input_tokens":100,"cache_read_input_tokens":0,"output_tokens":20}}}
{"type":"assistant","timestamp":"2026-02-07T08:19:41.817Z","message":{"id":"m1","model":"claude-opus-4-5-20251101","content":[{"type":"tool_use","id":"t2","name":"Read","input":{"file_path":"b.rs"}}],"usage":{"input_tokens":10,"cache_creation_input_tokens":100,"cache_read_input_tokens":0,"output_tokens":40}}}
{"type":"user","timestamp":"2026-02-07T08:19:41.719Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"fn a() {}"}]}}
{"type":"user","timestamp":"2026-02-07T08:19:41.900Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"fn b() {}"},{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"BBBB"}}]}]}}
{"type":"assistant","timestamp":"2026-02-07T08:19:45.000Z","message":{"id":"m2","model":"claude-opus-4-5-20251101","content":[{"type":"text","text":"Both read."}],"usage":{"input_tokens":3,"cache_creation_input_tokens":50,"cache_read_input_tokens":100,"output_tokens":5}}}
"#;

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
    let mut transcripts: Vec<(Vec<u8>, Format, &str)> = [
        ("claude-session.jsonl", Format::ClaudeCode),
        ("chat.json", Format::OpenaiChat),
        ("chat.jsonl", Format::OpenaiChat),
        ("demo__demo-1.traj.json", Format::MiniSweAgent),
        ("fix-pricing.traj", Format::SweAgent),
    ]
    .into_iter()
    .map(|(f, format)| (std::fs::read(fixtures.join(f)).unwrap(), format, f))
    .collect();
    transcripts.push((
        PARALLEL.as_bytes().to_vec(),
        Format::ClaudeCode,
        "parallel.jsonl",
    ));

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
                    ctxlab::experiment::parse_any("exp.toml", &text, &[])
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
                    ctxlab::experiment::parse_any("exp.toml", EXP, std::slice::from_ref(&set))
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
                        // What is imported loads again: the history keeps the time order.
                        let mut jsonl = Vec::new();
                        let histories: Vec<_> = runs.iter().map(|r| r.history.clone()).collect();
                        ctxlab::history::write_jsonl(&mut jsonl, &histories).unwrap();
                        let text = String::from_utf8(jsonl).unwrap();
                        if let Err(e) = ctxlab::history::parse_jsonl(Path::new("o.jsonl"), &text) {
                            panic!(
                                "an import does not load again: {e}\ninput: {:?}",
                                String::from_utf8_lossy(&input)
                            );
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

/// Runs the ctxlab binary in `dir` as a child under a memory limit (`RLIMIT_AS`) and a time
/// limit, so an abort, an out-of-memory kill or a hang fails the test rather than the
/// machine. Returns its exit code (`None`: killed by a signal) and its error output.
#[cfg(target_os = "linux")]
fn child(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    use std::io::Read as _;
    use std::os::unix::process::CommandExt as _;
    const MEMORY: u64 = 4 << 30;
    const SECONDS: u64 = 60;
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_ctxlab"));
    c.args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    // SAFETY: only setrlimit, async-signal-safe, between fork and exec.
    unsafe {
        c.pre_exec(|| {
            let l = libc::rlimit {
                rlim_cur: MEMORY,
                rlim_max: MEMORY,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &l) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut running = c.spawn().expect("run ctxlab");
    let mut err = running.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = err.read_to_end(&mut text);
        text
    });
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(s) = running.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > std::time::Duration::from_secs(SECONDS) {
            let _ = running.kill();
            panic!("{args:?}: still running after {SECONDS} s");
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    let text = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
    (status.code(), text)
}

/// The files of a fuzzed batch.
const BATCH: [&str; 3] = ["b0.jsonl", "b1.jsonl", "b2.jsonl"];

/// The bytes of the user's file a link at `--out` points to.
const USER_BYTES: &[u8] = b"the user's own file\n";

/// What `target` is for an `--out` case: 0 nothing, 1 a plain file of the user's, 2 a FIFO,
/// 3 a link to `user.txt`, 4 a folder.
#[cfg(target_os = "linux")]
fn set_out_target(dir: &Path, what: usize) {
    let target = dir.join("target");
    match std::fs::symlink_metadata(&target) {
        Ok(m) if m.is_dir() => std::fs::remove_dir(&target).unwrap(),
        Ok(_) => std::fs::remove_file(&target).unwrap(),
        Err(_) => {}
    }
    match what {
        1 => std::fs::write(&target, USER_BYTES).unwrap(),
        2 => {
            let c = std::ffi::CString::new(target.as_os_str().as_encoded_bytes()).unwrap();
            // SAFETY: a valid NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        }
        3 => std::os::unix::fs::symlink("user.txt", &target).unwrap(),
        4 => std::fs::create_dir(&target).unwrap(),
        _ => {}
    }
}

/// A refused `--out` case left `target` as it was, and the file a link points to.
#[cfg(target_os = "linux")]
fn assert_out_target_unchanged(dir: &Path, what: usize, err: &str) {
    use std::os::unix::fs::FileTypeExt as _;
    let target = dir.join("target");
    let kind = std::fs::symlink_metadata(&target).map(|m| m.file_type());
    match what {
        1 => assert_eq!(std::fs::read(&target).unwrap(), USER_BYTES, "{err}"),
        2 => assert!(kind.unwrap().is_fifo(), "{err}"),
        3 => assert!(kind.unwrap().is_symlink(), "{err}"),
        4 => assert!(kind.unwrap().is_dir(), "{err}"),
        _ => {}
    }
    assert_eq!(
        std::fs::read(dir.join("user.txt")).unwrap(),
        USER_BYTES,
        "{err}"
    );
}

/// A Batch output line answering `custom_id` with `text`.
fn batch_answer(custom_id: &str, text: &str) -> String {
    serde_json::json!({"id": "batch_req_1", "custom_id": custom_id, "response": {"status_code": 200,
        "body": {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]}},
        "error": null})
    .to_string()
}

/// The binary itself, as a child under memory and time limits, on mutated flags files, Batch
/// request and answer files, answer-cache entries and merge rows files, and on files past the
/// size limit or with lines far past the message bound: every run exits 0 or 1 (never an
/// abort, a signal or a hang), every refusal is a short message naming the file, and what is
/// accepted is valid (a finished folder, entries that read back). `CTXLAB_FUZZ_CHILD_CASES`
/// sets the number of cases (140 by default).
#[cfg(target_os = "linux")]
#[test]
fn the_binary_under_limits_refuses_mutated_files_briefly_and_accepts_only_valid_ones() {
    use ctxlab::llm::batch::{self, Existing};
    use ctxlab::llm::{SummaryCache, SummaryRequest};
    let total: usize = std::env::var("CTXLAB_FUZZ_CHILD_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(140);
    let mut rng = Rng(0x0dd_ba11_5eed_cafe);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(p.join("exp.toml"), EXP).unwrap();
    // A loaded history with a flags file.
    let history: String = (1..=6)
        .map(|i| {
            format!(
                "{{\"history\":\"run\",\"id\":{i},\"text\":\"{}\",\"required\":{}}}\n",
                "x".repeat(5 * i),
                i % 2 == 0
            )
        })
        .collect();
    std::fs::write(p.join("h.jsonl"), history).unwrap();
    let flags: String = (1..=6)
        .map(|i| {
            format!(
                "{{\"history\":\"run\",\"id\":{i},\"flag\":{}}}\n",
                i % 3 == 0
            )
        })
        .collect();
    std::fs::write(
        p.join("f.toml"),
        "name = \"f\"\nseed = 1\n[histories]\nfiles = [\"h.jsonl\"]\nflags_file = \"flags.jsonl\"\n[sweep]\nstrategies = [\"recent\", \"required\"]\nbudgets = [50]\n[output]\ndir = \"fo\"\n",
    )
    .unwrap();
    // Batch files for two requests.
    let requests: Vec<SummaryRequest> = ["alpha", "beta"]
        .iter()
        .map(|i| SummaryRequest {
            prompt: "Summarise.".into(),
            input: (*i).into(),
            model: "m".into(),
            max_tokens: None,
        })
        .collect();
    batch::write_requests(&p.join("requests.jsonl"), &requests, Existing::Refuse).unwrap();
    let requests_text = std::fs::read(p.join("requests.jsonl")).unwrap();
    let responses_text = format!(
        "{}\n{}\n",
        batch_answer(&requests[0].hash(), "sum of alpha"),
        batch_answer(&requests[1].hash(), "sum of beta")
    )
    .into_bytes();
    // A cache entry, as `summaries import` stores it.
    std::fs::write(p.join("responses.jsonl"), &responses_text).unwrap();
    let (code, err) = child(
        p,
        &[
            "summaries",
            "import",
            "responses.jsonl",
            "--requests",
            "requests.jsonl",
            "--into",
            "good",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    let entry_path = SummaryCache::open(&p.join("good"))
        .unwrap()
        .path_of(&requests[0].hash());
    let entry = std::fs::read(&entry_path).unwrap();
    // A sharded run whose rows files are mutated.
    for i in 0..2 {
        let (code, err) = child(
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
        assert_eq!(code, Some(0), "{err}");
    }
    let parts = [
        p.join("s/cells/shard=1/part.parquet"),
        p.join("s/cells-csv/shard=0/part.csv"),
    ];
    let originals: Vec<Vec<u8>> = parts.iter().map(|f| std::fs::read(f).unwrap()).collect();

    // The `--out` targets and the batches (kinds 7 and 8).
    std::fs::write(p.join("user.txt"), USER_BYTES).unwrap();
    let claude_fixture = root()
        .join("tests/fixtures/import/claude-session.jsonl")
        .display()
        .to_string();
    let claude_seeds: Vec<(Vec<u8>, Format, &str)> = vec![
        (
            std::fs::read(&claude_fixture).unwrap(),
            Format::ClaudeCode,
            "claude-session.jsonl",
        ),
        (
            PARALLEL.as_bytes().to_vec(),
            Format::ClaudeCode,
            "parallel.jsonl",
        ),
    ];
    let cc = claude_fixture.as_str();
    let mut out_case = (0usize, false);
    let (mut accepted, mut refused) = (0usize, 0usize);
    for case in 0..total {
        let kind = case % 9;
        // One round in five leaves the input as it was, so the accepting side is checked too.
        let pristine = (case / 7) % 5 == 0;
        let mutate = |rng: &mut Rng, bytes: &[u8]| {
            if pristine {
                bytes.to_vec()
            } else {
                mutate(rng, bytes)
            }
        };
        // (the file the refusal must name, the arguments)
        let (names, args): (&str, Vec<&str>) = match kind {
            0 => {
                let mut text = mutate(&mut rng, flags.as_bytes());
                if !pristine && rng.below(3) == 0 {
                    // A line in the positional form a careless flagger writes.
                    let i = 1 + rng.below(6);
                    let object = format!(
                        "{{\"history\":\"run\",\"id\":{i},\"flag\":{}}}\n",
                        i.is_multiple_of(3)
                    );
                    text = format!(
                        "{}[\"run\", {i}, {}]\n",
                        flags.replace(&object, ""),
                        i.is_multiple_of(3)
                    )
                    .into_bytes();
                }
                std::fs::write(p.join("flags.jsonl"), text).unwrap();
                let _ = std::fs::remove_dir_all(p.join("fo"));
                ("flags.jsonl", vec!["sweep", "f.toml", "-q"])
            }
            1 | 2 => {
                let (file, seed) = if kind == 1 {
                    ("responses.jsonl", &responses_text)
                } else {
                    ("requests.jsonl", &requests_text)
                };
                std::fs::write(p.join("requests.jsonl"), &requests_text).unwrap();
                std::fs::write(p.join("responses.jsonl"), &responses_text).unwrap();
                std::fs::write(p.join(file), mutate(&mut rng, seed)).unwrap();
                let _ = std::fs::remove_dir_all(p.join("cache"));
                (
                    file,
                    vec![
                        "summaries",
                        "import",
                        "responses.jsonl",
                        "--requests",
                        "requests.jsonl",
                        "--into",
                        "cache",
                    ],
                )
            }
            3 => {
                std::fs::write(p.join("requests.jsonl"), &requests_text).unwrap();
                std::fs::write(p.join("responses.jsonl"), &responses_text).unwrap();
                let _ = std::fs::remove_dir_all(p.join("cache"));
                let at = p
                    .join("cache")
                    .join(entry_path.strip_prefix(p.join("good")).unwrap());
                std::fs::create_dir_all(at.parent().unwrap()).unwrap();
                std::fs::write(&at, mutate(&mut rng, &entry)).unwrap();
                (
                    ".json",
                    vec![
                        "summaries",
                        "import",
                        "responses.jsonl",
                        "--requests",
                        "requests.jsonl",
                        "--into",
                        "cache",
                    ],
                )
            }
            4 => {
                unmerge(&p.join("s"));
                let i = rng.below(parts.len());
                for (f, o) in parts.iter().zip(&originals) {
                    std::fs::write(f, o).unwrap();
                }
                std::fs::write(&parts[i], mutate(&mut rng, &originals[i])).unwrap();
                ("part.", vec!["merge", "s"])
            }
            5 => {
                // Past the size limit by a few bytes or a few megabytes.
                let extra = (4 << 20) + 1 + rng.below(4 << 20);
                let mut text = EXP.as_bytes().to_vec();
                text.resize(text.len() + extra, b'#');
                std::fs::write(p.join("big.toml"), text).unwrap();
                ("big.toml: is ", vec!["sweep", "big.toml", "--dry-run"])
            }
            7 => {
                // An `--out` that exists: a file, a FIFO, a link to a file of the user's, a
                // folder (or nothing), for `import` or `generate`, forced or not.
                out_case = (rng.below(5), rng.below(2) == 1);
                set_out_target(p, out_case.0);
                let mut args = vec!["generate", "exp.toml", "--out", "target"];
                if rng.below(2) == 0 {
                    args = vec!["import", cc, "--format", "claude-code", "--out", "target"];
                }
                if out_case.1 {
                    args.push("--force");
                }
                ("target", args)
            }
            8 => {
                // Three transcripts, each mutated or not: a refusal names every bad one.
                for (i, name) in BATCH.iter().enumerate() {
                    let (seed, _, _) = &claude_seeds[(case + i) % claude_seeds.len()];
                    let text = if rng.below(2) == 0 {
                        seed.clone()
                    } else {
                        mutate(&mut rng, seed)
                    };
                    std::fs::write(p.join(name), text).unwrap();
                }
                let _ = std::fs::remove_file(p.join("batch.jsonl"));
                let mut args = vec!["import"];
                args.extend(BATCH);
                args.extend(["--format", "claude-code", "--out", "batch.jsonl"]);
                ("b", args)
            }
            _ => {
                // A TOML error on a line far longer than a message may be.
                let long = "3, ".repeat(10_000 + rng.below(300_000));
                let line = self::mutate(&mut rng, format!("seed = [{long}").as_bytes());
                let mut text = b"name = \"x\"\n".to_vec();
                text.extend(line);
                std::fs::write(p.join("long.toml"), text).unwrap();
                ("long.toml", vec!["sweep", "long.toml", "--dry-run"])
            }
        };
        let (code, err) = child(p, &args);
        assert!(
            matches!(code, Some(0) | Some(1)),
            "{args:?} (case {case}) ended by a signal or an abort: {code:?}\n{}",
            ctxlab::quote::cut(&err, 2000)
        );
        assert!(
            err.len() <= 4096,
            "{args:?} (case {case}): {} bytes of error output",
            err.len()
        );
        if code == Some(0) {
            accepted += 1;
            match kind {
                0 => {
                    assert!(
                        p.join("fo/manifest.json").is_file()
                            && p.join("fo/summary.parquet").is_file()
                    );
                    // Flags files are JSON objects, one a line, read by name.
                    let text = std::fs::read_to_string(p.join("flags.jsonl")).unwrap();
                    assert!(
                        text.lines().all(|l| l.trim().is_empty()
                            || l.trim_start()
                                .trim_start_matches('\u{feff}')
                                .starts_with('{')),
                        "a flags file not of objects was accepted: {text}"
                    );
                }
                1..=3 => {
                    let cache = SummaryCache::open(&p.join("cache")).unwrap();
                    for r in &requests {
                        // What is stored reads back, checked against its request.
                        cache.entry(&r.hash()).unwrap();
                    }
                }
                4 => {
                    assert!(p.join("s/manifest.json").is_file());
                    // Only an unchanged file passes its checksum.
                    for (f, o) in parts.iter().zip(&originals) {
                        assert_eq!(
                            &std::fs::read(f).unwrap(),
                            o,
                            "merge accepted a changed {}",
                            f.display()
                        );
                    }
                }
                7 => {
                    // Only nothing, or a plain file with --force, is written over.
                    assert!(
                        out_case.0 == 0 || (out_case.0 == 1 && out_case.1),
                        "{out_case:?}"
                    );
                    assert!(ctxlab::history::load_jsonl(&p.join("target")).is_ok());
                }
                8 => {
                    for name in BATCH {
                        let read = import::read(
                            &p.join(name),
                            Format::ClaudeCode,
                            &mut Problems::strict(),
                        );
                        assert!(read.is_ok(), "a batch with a bad {name} was accepted");
                    }
                }
                _ => panic!("{args:?}: accepted"),
            }
        } else {
            refused += 1;
            assert!(err.starts_with("error: "), "{err}");
            assert!(
                err.contains(names),
                "{args:?}: the refusal does not name {names}: {err}"
            );
            if kind == 4 {
                assert!(!p.join("s/manifest.json").exists(), "{err}");
            }
            if kind == 7 {
                assert_out_target_unchanged(p, out_case.0, &err);
            }
            if kind == 8 {
                assert!(!p.join("batch.jsonl").exists());
                for name in BATCH {
                    let bad =
                        import::read(&p.join(name), Format::ClaudeCode, &mut Problems::strict())
                            .is_err();
                    assert_eq!(
                        bad,
                        err.contains(name),
                        "{name} bad: {bad}, yet the refusal says: {err}"
                    );
                }
            }
        }
    }
    eprintln!("child fuzz: {total} cases ({accepted} accepted, {refused} refused)");
    assert!(
        accepted > 0 && refused > total / 3,
        "{accepted} accepted, {refused} refused"
    );
}
