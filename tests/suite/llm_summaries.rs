//! Summaries written by a model: Batch request and answer files, `summaries import` into the
//! answer cache, and the endpoint client (`Endpoint::fill`, `summaries fill`) against a loopback
//! server.

use crate::common::*;
use ctxlab::llm::batch::{self, Existing};
use ctxlab::llm::{Endpoint, SummaryCache, SummaryRequest};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn request(input: &str) -> SummaryRequest {
    SummaryRequest {
        prompt: "Summarise.".into(),
        input: input.into(),
        model: "m".into(),
        max_tokens: None,
    }
}

/// A Batch output line answering `custom_id` with `text`, as OpenAI's batch service writes it.
fn answer(custom_id: &str, text: &str) -> String {
    serde_json::json!({
        "id": "batch_req_1",
        "custom_id": custom_id,
        "response": {
            "status_code": 200,
            "request_id": "req_1",
            "body": {"id": "chatcmpl-1", "object": "chat.completion", "model": "m",
                     "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                  "finish_reason": "stop"}]}
        },
        "error": null
    })
    .to_string()
}

/// A requests file of `inputs` (written by the library, as `summaries export` will) and the
/// path of a responses file to fill, in a fresh folder.
fn files(inputs: &[&str]) -> (tempfile::TempDir, PathBuf, PathBuf, Vec<SummaryRequest>) {
    let dir = tempfile::tempdir().unwrap();
    let requests: Vec<SummaryRequest> = inputs.iter().map(|i| request(i)).collect();
    let req_path = dir.path().join("requests.jsonl");
    batch::write_requests(&req_path, &requests, Existing::Refuse).unwrap();
    let resp_path = dir.path().join("responses.jsonl");
    (dir, req_path, resp_path, requests)
}

fn import(dir: &Path, responses: &Path, requests: &Path, into: &Path) -> std::process::Output {
    ctxlab(
        dir,
        &[
            "summaries",
            "import",
            responses.to_str().unwrap(),
            "--requests",
            requests.to_str().unwrap(),
            "--into",
            into.to_str().unwrap(),
        ],
    )
}

/// The answer files under a cache folder (none when the folder is absent).
fn entries(cache: &Path) -> usize {
    fn walk(p: &Path) -> usize {
        match std::fs::read_dir(p) {
            Err(_) => 0,
            Ok(rd) => rd
                .map(|e| e.unwrap().path())
                .map(|p| if p.is_dir() { walk(&p) } else { 1 })
                .sum(),
        }
    }
    walk(cache)
}

#[test]
fn imported_answers_are_what_the_cache_returns() {
    let (dir, requests, responses, asked) = files(&["alpha", "beta", "gamma"]);
    let (a, b, c) = (asked[0].hash(), asked[1].hash(), asked[2].hash());
    // Answers in another order than asked, gamma unanswered, a blank line between.
    std::fs::write(
        &responses,
        format!(
            "{}\n\n{}\n",
            answer(&b, "summary of beta"),
            answer(&a, "summary of alpha")
        ),
    )
    .unwrap();
    let into = dir.path().join("cache");
    let o = import(dir.path(), &responses, &requests, &into);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("2 answers read, for 3 distinct requests: 2 stored in")
            && out.contains("0 already there")
            && out.contains("1 of the 3 requests still have no answer"),
        "{out}"
    );
    let cache = SummaryCache::open(&into).unwrap();
    assert_eq!(cache.get(&a).unwrap().as_deref(), Some("summary of alpha"));
    assert_eq!(cache.get(&b).unwrap().as_deref(), Some("summary of beta"));
    assert_eq!(cache.get(&c).unwrap(), None);
    assert_eq!(entries(&into), 2);
    // Importing the same file again stores nothing new: both already there.
    let o = import(dir.path(), &responses, &requests, &into);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("0 stored in") && stdout(&o).contains("2 already there"));
    assert_eq!(entries(&into), 2);
}

/// Each bad responses file fails with one message naming the file, the line and the fault,
/// and leaves no answer stored: the good line before the bad one is not kept either.
#[test]
fn a_bad_response_file_stores_nothing_and_says_where() {
    let (dir, requests, responses, asked) = files(&["alpha", "beta"]);
    let (a, b) = (asked[0].hash(), asked[1].hash());
    let other = request("never asked").hash();
    let good = answer(&a, "summary of alpha");
    let failing = serde_json::json!({
        "id": "batch_req_2", "custom_id": b,
        "response": {"status_code": 500, "body": {"error": {"message": "model overloaded"}}},
        "error": null
    })
    .to_string();
    let cases: Vec<(String, Vec<&str>)> = vec![
        (
            format!("{good}\n{}\n", answer(&other, "x")),
            vec![
                "responses.jsonl:2:",
                &other,
                "is not a request of",
                "holds 2 requests",
            ],
        ),
        (
            format!("{good}\n{{\"custom_id\": \"{b}\", \"response\": \n"),
            vec!["responses.jsonl:2:", "not JSON"],
        ),
        (
            format!("{good}\n{failing}\n"),
            vec![
                "responses.jsonl:2:",
                "status 500, not 200",
                "model overloaded",
            ],
        ),
        (
            format!("{good}\n{}\n", answer(&a, "summary of alpha")),
            vec!["responses.jsonl:2:", "answered twice (lines 1 and 2)"],
        ),
    ];
    for (text, needles) in cases {
        std::fs::write(&responses, &text).unwrap();
        let into = dir.path().join("cache");
        let o = import(dir.path(), &responses, &requests, &into);
        assert_fails_with(&o, &needles);
        assert!(!into.exists(), "made the cache for:\n{text}");
        assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    }
}

/// A response for another request hash: the requests file's line was changed after export, so
/// the `custom_id` the answer carries is not the hash of the request it would be stored for.
#[test]
fn an_answer_whose_id_is_not_its_requests_hash_is_refused() {
    let (dir, requests, responses, asked) = files(&["alpha"]);
    let a = asked[0].hash();
    let text = std::fs::read_to_string(&requests).unwrap();
    std::fs::write(&requests, text.replace("\"alpha\"", "\"alpha, edited\"")).unwrap();
    std::fs::write(&responses, answer(&a, "summary of alpha") + "\n").unwrap();
    let into = dir.path().join("cache");
    let o = import(dir.path(), &responses, &requests, &into);
    let edited = request("alpha, edited").hash();
    assert_fails_with(
        &o,
        &[
            "requests.jsonl:1:",
            &format!("custom_id {a} is not the hash of the line's request ({edited})"),
        ],
    );
    assert_eq!(entries(&into), 0);
}

/// The cache already answers a request differently: the import is refused whole.
#[test]
fn a_different_answer_to_a_request_already_answered_is_refused() {
    let (dir, requests, responses, asked) = files(&["alpha", "beta"]);
    let (a, b) = (asked[0].hash(), asked[1].hash());
    let into = dir.path().join("cache");
    SummaryCache::open(&into)
        .unwrap()
        .put(&asked[0], "first answer")
        .unwrap();
    std::fs::write(
        &responses,
        format!(
            "{}\n{}\n",
            answer(&b, "summary of beta"),
            answer(&a, "second answer")
        ),
    )
    .unwrap();
    let o = import(dir.path(), &responses, &requests, &into);
    assert_fails_with(
        &o,
        &[
            &format!("{a}.json"),
            "already holds another answer",
            "responses.jsonl:2",
        ],
    );
    let cache = SummaryCache::open(&into).unwrap();
    assert_eq!(cache.get(&a).unwrap().as_deref(), Some("first answer"));
    assert_eq!(cache.get(&b).unwrap(), None);
}

// ---------------------------------------------------------------------------------------------
// The endpoint client against a loopback server.

/// What the server does with the n-th request (from 0) it receives.
#[derive(Clone)]
enum Reply {
    /// Answers with this status; a 200 carries "summary of <the user message>".
    Status(u16),
    /// Reads the request and never answers (closes after the test's client has given up).
    Silent,
}

struct Server {
    url: String,
    /// Each request's Authorization header (empty when none) and body, in arrival order.
    seen: Arc<Mutex<Vec<(String, serde_json::Value)>>>,
}

/// A server on 127.0.0.1 answering by `script`. It stops by itself after 10 s or after
/// `script.len()` connections, so no test leaves it running.
fn serve(script: Vec<Reply>) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    listener.set_nonblocking(true).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let served = Arc::new(AtomicUsize::new(0));
    std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut handlers = Vec::new();
        while served.load(Ordering::SeqCst) < script.len() && Instant::now() < deadline {
            match listener.accept() {
                Ok((stream, _)) => {
                    let n = served.fetch_add(1, Ordering::SeqCst);
                    let reply = script[n].clone();
                    let log = log.clone();
                    handlers.push(std::thread::spawn(move || handle(stream, reply, &log)));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(5)),
            }
        }
        for h in handlers {
            let _ = h.join();
        }
    });
    Server { url, seen }
}

fn handle(stream: TcpStream, reply: Reply, log: &Mutex<Vec<(String, serde_json::Value)>>) {
    stream.set_nonblocking(false).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let (mut length, mut auth) = (0usize, String::new());
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let lower = line.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse().unwrap();
        }
        if lower.starts_with("authorization:") {
            auth = line["authorization:".len()..].trim().to_string();
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
    let user = body["messages"][1]["content"]
        .as_str()
        .unwrap_or("")
        .to_string();
    log.lock().unwrap().push((auth, body));
    let (status, text) = match reply {
        Reply::Silent => {
            std::thread::sleep(Duration::from_secs(3));
            return;
        }
        Reply::Status(200) => (
            200,
            serde_json::json!({"choices": [{"message": {"role": "assistant",
                                "content": format!("summary of {user}")}}]})
            .to_string(),
        ),
        Reply::Status(s) => (
            s,
            format!("{{\"error\":{{\"message\":\"refused with {s}\"}}}}"),
        ),
    };
    let mut stream = stream;
    let _ = write!(
        stream,
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    );
}

fn endpoint(url: &str) -> Endpoint {
    Endpoint {
        concurrency: 2,
        retries: 2,
        timeout: Duration::from_secs(5),
        backoff: Duration::from_millis(10),
        ..Endpoint::new(url)
    }
}

#[test]
fn the_endpoint_fills_what_the_cache_lacks() {
    let dir = tempfile::tempdir().unwrap();
    let cache = SummaryCache::open(dir.path()).unwrap();
    let asked = [request("alpha"), request("beta"), request("alpha")];
    cache.put(&request("gamma"), "already").unwrap();
    let server = serve(vec![Reply::Status(200), Reply::Status(200)]);
    // alpha twice and beta: two distinct requests, both missing, so two calls.
    let stored = endpoint(&server.url).fill(&asked, &cache).unwrap();
    assert_eq!(stored, 2);
    assert_eq!(
        cache.get(&asked[0].hash()).unwrap().as_deref(),
        Some("summary of alpha")
    );
    assert_eq!(
        cache.get(&asked[1].hash()).unwrap().as_deref(),
        Some("summary of beta")
    );
    let seen = server.seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    // The body sent is the Batch line's body: system prompt, then the text.
    let body = seen
        .iter()
        .find(|(_, b)| b["messages"][1]["content"] == "alpha")
        .unwrap();
    assert_eq!(
        body.1,
        serde_json::json!({"model": "m", "messages": [
            {"role": "system", "content": "Summarise."}, {"role": "user", "content": "alpha"}]})
    );
    drop(seen);
    // Everything is there now: no call at all (the server would refuse a third connection).
    assert_eq!(endpoint(&server.url).fill(&asked, &cache).unwrap(), 0);
}

#[test]
fn a_passing_server_error_is_retried() {
    let dir = tempfile::tempdir().unwrap();
    let cache = SummaryCache::open(dir.path()).unwrap();
    let server = serve(vec![Reply::Status(503), Reply::Status(200)]);
    assert_eq!(
        endpoint(&server.url)
            .fill(&[request("alpha")], &cache)
            .unwrap(),
        1
    );
    assert_eq!(server.seen.lock().unwrap().len(), 2);
}

#[test]
fn a_server_error_that_lasts_fails_after_the_retries_storing_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let cache = SummaryCache::open(dir.path()).unwrap();
    let server = serve(vec![Reply::Status(500); 3]);
    let e = endpoint(&server.url)
        .fill(&[request("alpha")], &cache)
        .unwrap_err()
        .to_string();
    // retries = 2: one try and two more.
    assert!(
        e.starts_with(&server.url)
            && e.contains("status 500: refused with 500 (3 tries)")
            && e.contains("0 of the 1 missing answers were stored"),
        "{e}"
    );
    assert_eq!(server.seen.lock().unwrap().len(), 3);
    assert_eq!(entries(dir.path()), 0);
}

#[test]
fn an_unauthorised_answer_is_not_retried() {
    let dir = tempfile::tempdir().unwrap();
    let cache = SummaryCache::open(dir.path()).unwrap();
    let server = serve(vec![Reply::Status(401); 3]);
    let e = endpoint(&server.url)
        .fill(&[request("alpha")], &cache)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("status 401: refused with 401 (the endpoint wants a key: --key-env VAR)"),
        "{e}"
    );
    assert_eq!(server.seen.lock().unwrap().len(), 1);
    assert_eq!(entries(dir.path()), 0);
}

#[test]
fn a_silent_server_times_out() {
    let dir = tempfile::tempdir().unwrap();
    let cache = SummaryCache::open(dir.path()).unwrap();
    let server = serve(vec![Reply::Silent]);
    let slow = Endpoint {
        retries: 0,
        timeout: Duration::from_millis(300),
        ..endpoint(&server.url)
    };
    let started = Instant::now();
    let e = slow
        .fill(&[request("alpha")], &cache)
        .unwrap_err()
        .to_string();
    assert!(e.contains("no answer within 0.3 s (1 try)"), "{e}");
    // It gave up at the timeout, not when the server closed (3 s).
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(entries(dir.path()), 0);
}

#[test]
fn an_absent_endpoint_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let cache = SummaryCache::open(dir.path()).unwrap();
    // A port that was free a moment ago and has no listener now.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let e = endpoint(&url)
        .fill(&[request("alpha")], &cache)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(&format!("{url}: request ")) && e.contains("connection refused"),
        "{e}"
    );
    assert_eq!(entries(dir.path()), 0);
}

/// One request fails for good after another was answered: the answer stays (whole), the error
/// says so, and a second run asks only for the one still missing.
#[test]
fn answers_before_a_failure_stay_and_a_rerun_asks_for_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let cache = SummaryCache::open(dir.path()).unwrap();
    let asked = [request("alpha"), request("beta")];
    let one_at_a_time = |url: &str| Endpoint {
        concurrency: 1,
        ..endpoint(url)
    };
    let server = serve(vec![Reply::Status(200), Reply::Status(400)]);
    let e = one_at_a_time(&server.url)
        .fill(&asked, &cache)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!("request {}: status 400", asked[1].hash()))
            && e.contains("1 of the 2 missing answers were stored"),
        "{e}"
    );
    assert_eq!(entries(dir.path()), 1);
    let again = serve(vec![Reply::Status(200)]);
    assert_eq!(one_at_a_time(&again.url).fill(&asked, &cache).unwrap(), 1);
    assert_eq!(
        again.seen.lock().unwrap()[0].1["messages"][1]["content"],
        "beta"
    );
}

#[test]
fn summaries_fill_sends_the_key_and_stores_the_answers() {
    let (dir, requests, _, asked) = files(&["alpha", "beta"]);
    let server = serve(vec![Reply::Status(200), Reply::Status(200)]);
    let into = dir.path().join("cache");
    let o = ctxlab_env(
        dir.path(),
        &[
            "summaries",
            "fill",
            requests.to_str().unwrap(),
            "--url",
            &server.url,
            "--model",
            "m",
            "--key-env",
            "CTXLAB_TEST_KEY",
            "--into",
            into.to_str().unwrap(),
        ],
        ("CTXLAB_TEST_KEY", "sekrit"),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("2 distinct requests: 2 answered by")
            && stdout(&o).contains("0 already there"),
        "{}",
        stdout(&o)
    );
    let seen = server.seen.lock().unwrap();
    assert!(
        seen.iter().all(|(auth, _)| auth == "Bearer sekrit"),
        "{seen:?}"
    );
    let cache = SummaryCache::open(&into).unwrap();
    assert_eq!(
        cache.get(&asked[1].hash()).unwrap().as_deref(),
        Some("summary of beta")
    );
}

#[test]
fn summaries_fill_refuses_a_missing_key_and_another_model_before_asking() {
    let (dir, requests, _, _) = files(&["alpha"]);
    let into = dir.path().join("cache");
    let url = "http://127.0.0.1:9/v1";
    let args = |extra: &[&'static str]| {
        let mut a = vec![
            "summaries",
            "fill",
            requests.to_str().unwrap(),
            "--url",
            url,
            "--into",
            into.to_str().unwrap(),
        ];
        a.extend_from_slice(extra);
        a.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let run = |a: Vec<String>| {
        ctxlab(
            dir.path(),
            &a.iter().map(String::as_str).collect::<Vec<_>>(),
        )
    };
    let o = run(args(&["--key-env", "CTXLAB_TEST_NO_SUCH_KEY"]));
    assert_fails_with(&o, &[url, "CTXLAB_TEST_NO_SUCH_KEY is not set"]);
    let o = run(args(&["--model", "other"]));
    assert_fails_with(&o, &[url, "names model \"m\", not \"other\""]);
    // Nothing was made: not even the cache folder.
    assert!(!into.exists());
}

/// The history and experiment of `llm_sweep`, with the summariser asking an endpoint itself.
const SWEEP_HISTORY: &str = r#"{"id": 1, "kind": "user", "text": "fix parse_args in src/cli.rs", "required": true}
{"id": 2, "kind": "tool_result", "tool": "bash", "text": "saw E0308 in build", "required": true}
{"id": 3, "kind": "assistant", "text": "looking at config_loader now", "required": false}
{"id": 4, "kind": "assistant", "text": "done", "required": false}
"#;

fn sweep_experiment(url: &str) -> String {
    format!(
        r#"
name = "llm"
seed = 1
[histories]
files = ["h.jsonl"]
cost = "chars"
[sweep]
strategies = ["summary(summariser=llm, cache=answers, model=m, url={url}, keep_recent=1)"]
budgets = [100, 50]
false_negative = [0.0]
false_positive = [0.0]
[output]
dir = "out"
formats = ["csv"]
"#
    )
}

#[test]
fn a_sweep_asks_its_endpoint_for_what_the_cache_lacks_then_reads_the_cache() {
    let server = serve(vec![Reply::Status(200)]);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("h.jsonl"), SWEEP_HISTORY).unwrap();
    std::fs::write(d.join("llm.toml"), sweep_experiment(&server.url)).unwrap();
    let o = crate::common::ctxlab(d, &["sweep", "llm.toml", "-q"]);
    assert!(o.status.success(), "{}", crate::common::stderr(&o));
    // One compaction (at 50 %; at 100 % the history fits): one request, one answer stored.
    assert_eq!(server.seen.lock().unwrap().len(), 1);
    assert_eq!(entries(&d.join("answers")), 1);
    let first = std::fs::read(d.join("out/cells.csv")).unwrap();
    // The server is gone (it served its one reply): the same sweep reads the cache alone and
    // writes the very same rows.
    std::fs::remove_dir_all(d.join("out")).unwrap();
    let o = crate::common::ctxlab(d, &["sweep", "llm.toml", "-q"]);
    assert!(o.status.success(), "{}", crate::common::stderr(&o));
    assert_eq!(std::fs::read(d.join("out/cells.csv")).unwrap(), first);
}

#[test]
fn a_sweep_whose_endpoint_is_absent_stops_naming_it_and_writes_nothing() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("h.jsonl"), SWEEP_HISTORY).unwrap();
    std::fs::write(d.join("llm.toml"), sweep_experiment(&url)).unwrap();
    crate::common::assert_fails_with(
        &crate::common::ctxlab(d, &["sweep", "llm.toml", "-q"]),
        &["the `llm` summariser could not get its summaries", &url],
    );
    assert!(!d.join("out/cells.csv").exists());
    assert!(!d.join("answers").exists());
}
