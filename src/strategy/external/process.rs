//! The external programs of one worker thread: each command is started once, on the thread's
//! first request for it, and kept for the thread's life, so a sweep starts one process per
//! worker, not one per cell. One request line goes out, one answer line comes back, within
//! the strategy's time limit.
//!
//! A thread writes each request and another reads each answer, so a program that stops
//! reading or stops answering cannot block the worker past the limit: it is killed then. A
//! third thread keeps the end of the program's standard error for the message of a failure.
//! A program that failed is stopped and dropped from the pool; the others get end-of-file on
//! their standard input when the thread ends (or the run's process does) and are expected to
//! exit then.

use super::command::CommandLine;
use std::cell::RefCell;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStderr, ChildStdout, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The longest answer line read (16 MiB): a context of a hundred thousand items fits many
/// times over; anything longer is a program writing something else.
pub const MAX_ANSWER_BYTES: u64 = 16 << 20;
/// How much of the program's standard error is kept, and how many of its last lines a
/// failure shows.
const STDERR_KEPT: usize = 16 << 10;
const STDERR_LINES: usize = 20;
/// How long a program that is told to stop (its input closed) has to exit before it is killed.
const GRACE: Duration = Duration::from_secs(2);

/// Why an exchange failed: the request's number and what was wrong, and the end of the
/// program's standard error.
#[derive(Debug)]
pub struct Trouble {
    pub request: u64,
    pub what: String,
    pub stderr: String,
}

/// What the reading and writing threads report.
enum Event {
    Line(String),
    NotUtf8,
    TooLong,
    /// End of file on the program's standard output.
    End,
    ReadFailed(std::io::Error),
    /// The program stopped reading its input.
    WriteFailed,
}

struct Program {
    command: String,
    child: Child,
    /// Request lines for the writing thread; dropped to close the program's input.
    requests: Option<Sender<Vec<u8>>>,
    events: Receiver<Event>,
    stderr: Arc<Mutex<Vec<u8>>>,
    stderr_reader: Option<JoinHandle<()>>,
    /// Requests sent so far.
    sent: u64,
}

thread_local! {
    static PROGRAMS: RefCell<Vec<Program>> = const { RefCell::new(Vec::new()) };
}

/// Sends one request to `command`'s program on this thread (started if need be), written by
/// `write` from its number, and returns that number, whether it was the program's first, and
/// the answer line. A failed program is stopped and dropped from the pool.
pub fn exchange(
    command: &CommandLine,
    limit: Duration,
    write: impl FnOnce(u64, &mut Vec<u8>),
) -> Result<(u64, bool, String), Trouble> {
    PROGRAMS.with(|pool| {
        let mut pool = pool.borrow_mut();
        let at = match pool.iter().position(|p| p.command == command.text) {
            Some(at) => at,
            None => {
                let program = Program::start(command).map_err(|e| Trouble {
                    request: 1,
                    what: format!("cannot start the program: {e}"),
                    stderr: String::new(),
                })?;
                pool.push(program);
                pool.len() - 1
            }
        };
        match pool[at].exchange(limit, write) {
            Ok(answer) => Ok(answer),
            Err(mut trouble) => {
                trouble.stderr = pool.swap_remove(at).finish();
                Err(trouble)
            }
        }
    })
}

/// Stops `command`'s program on this thread (after an answer ctxlab refused) and returns the
/// end of its standard error.
pub fn retire(command: &CommandLine) -> String {
    PROGRAMS.with(|pool| {
        let mut pool = pool.borrow_mut();
        match pool.iter().position(|p| p.command == command.text) {
            Some(at) => pool.swap_remove(at).finish(),
            None => String::new(),
        }
    })
}

impl Program {
    fn start(command: &CommandLine) -> std::io::Result<Program> {
        let mut child = Command::new(&command.words[0])
            .args(&command.words[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let (events_tx, events) = mpsc::channel();
        let (requests, requests_rx) = mpsc::channel::<Vec<u8>>();
        let stdin = child.stdin.take().expect("stdin was piped");
        let stdout = child.stdout.take().expect("stdout was piped");
        let stderr_pipe = child.stderr.take().expect("stderr was piped");
        let writer_events = events_tx.clone();
        std::thread::spawn(move || {
            let mut stdin = stdin;
            for line in requests_rx {
                if stdin.write_all(&line).and_then(|()| stdin.flush()).is_err() {
                    let _ = writer_events.send(Event::WriteFailed);
                    return;
                }
            }
            // The sender was dropped: the program's input closes here.
        });
        std::thread::spawn(move || read_answers(stdout, events_tx));
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let kept = stderr.clone();
        let stderr_reader = Some(std::thread::spawn(move || keep_stderr(stderr_pipe, kept)));
        Ok(Program {
            command: command.text.clone(),
            child,
            requests: Some(requests),
            events,
            stderr,
            stderr_reader,
            sent: 0,
        })
    }

    fn exchange(
        &mut self,
        limit: Duration,
        write: impl FnOnce(u64, &mut Vec<u8>),
    ) -> Result<(u64, bool, String), Trouble> {
        self.sent += 1;
        let number = self.sent;
        let trouble = |what: String| Trouble {
            request: number,
            what,
            stderr: String::new(),
        };
        let mut line = Vec::new();
        write(number, &mut line);
        line.push(b'\n');
        let sent = self.requests.as_ref().map(|r| r.send(line).is_ok());
        if sent != Some(true) {
            return Err(trouble(self.ended("before reading the request")));
        }
        match self.events.recv_timeout(limit) {
            Ok(Event::Line(answer)) => Ok((number, number == 1, answer)),
            Ok(Event::NotUtf8) => Err(trouble("its answer is not UTF-8 text".into())),
            Ok(Event::TooLong) => Err(trouble(format!(
                "its answer is longer than {} MiB without a line break",
                MAX_ANSWER_BYTES >> 20
            ))),
            Ok(Event::ReadFailed(e)) => Err(trouble(format!("cannot read its answer: {e}"))),
            Ok(Event::WriteFailed) => Err(trouble(self.ended("before reading the whole request"))),
            Ok(Event::End) | Err(RecvTimeoutError::Disconnected) => {
                Err(trouble(self.ended("without answering")))
            }
            Err(RecvTimeoutError::Timeout) => {
                let _ = self.child.kill();
                Err(trouble(format!(
                    "no answer within {} s (the strategy's time_limit); the program was stopped",
                    limit.as_secs_f64()
                )))
            }
        }
    }

    /// "the program ended {when} (exit status …)", once it has (or was stopped for not).
    fn ended(&mut self, when: &str) -> String {
        match wait_for(&mut self.child, GRACE) {
            Some(status) => format!("the program ended {when} ({status})"),
            None => {
                let _ = self.child.kill();
                format!("the program closed its output {when} and was stopped")
            }
        }
    }

    /// Closes the program's input, waits for it to exit (killing it after the grace time),
    /// and returns the end of its standard error.
    fn finish(mut self) -> String {
        self.shut_down();
        if let Some(reader) = self.stderr_reader.take() {
            // Its standard error closes with it (unless a child of its own holds it open).
            let until = Instant::now() + GRACE;
            while !reader.is_finished() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        let kept = self.stderr.lock().map(|b| b.clone()).unwrap_or_default();
        last_lines(&kept, STDERR_LINES)
    }

    fn shut_down(&mut self) {
        if self.requests.take().is_none() {
            return;
        }
        if wait_for(&mut self.child, GRACE).is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        self.shut_down();
    }
}

/// The child's exit status once it has exited, waiting at most `grace`.
fn wait_for(child: &mut Child, grace: Duration) -> Option<std::process::ExitStatus> {
    let until = Instant::now() + grace;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(5)),
            _ => return None,
        }
    }
}

fn read_answers(stdout: ChildStdout, events: Sender<Event>) {
    let mut reader = BufReader::new(stdout);
    loop {
        let mut line = Vec::new();
        let event = match (&mut reader)
            .take(MAX_ANSWER_BYTES + 1)
            .read_until(b'\n', &mut line)
        {
            Ok(0) => Event::End,
            Ok(_) if line.last() != Some(&b'\n') && line.len() as u64 > MAX_ANSWER_BYTES => {
                Event::TooLong
            }
            Ok(_) => {
                while matches!(line.last(), Some(b'\n' | b'\r')) {
                    line.pop();
                }
                match String::from_utf8(line) {
                    Ok(text) => Event::Line(text),
                    Err(_) => Event::NotUtf8,
                }
            }
            Err(e) => Event::ReadFailed(e),
        };
        let last = matches!(
            event,
            Event::End | Event::TooLong | Event::ReadFailed(_) | Event::NotUtf8
        );
        if events.send(event).is_err() || last {
            return;
        }
    }
}

fn keep_stderr(mut pipe: ChildStderr, kept: Arc<Mutex<Vec<u8>>>) {
    let mut buf = [0u8; 4096];
    while let Ok(n) = pipe.read(&mut buf) {
        if n == 0 {
            return;
        }
        let Ok(mut k) = kept.lock() else { return };
        k.extend_from_slice(&buf[..n]);
        if k.len() > STDERR_KEPT {
            let cut = k.len() - STDERR_KEPT;
            k.drain(..cut);
        }
    }
}

/// The last `n` non-empty-ended lines of `bytes`, as text.
fn last_lines(bytes: &[u8], n: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.trim_end().lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_end_of_standard_error_is_its_last_lines() {
        let text: String = (1..=25).map(|i| format!("line {i}\n")).collect();
        let last = last_lines(text.as_bytes(), 20);
        assert!(last.starts_with("line 6\n"), "{last}");
        assert!(last.ends_with("line 25"), "{last}");
        assert_eq!(last_lines(b"", 20), "");
    }

    #[test]
    fn a_program_answers_line_by_line_and_one_that_dies_is_reported() {
        // `cat` answers each request with the request itself.
        let cat = CommandLine::parse("cat").unwrap();
        let limit = Duration::from_secs(10);
        let (n, first, line) = exchange(&cat, limit, |n, b| {
            b.extend(format!("{{\"n\":{n}}}").bytes())
        })
        .unwrap();
        assert_eq!((n, first, line.as_str()), (1, true, "{\"n\":1}"));
        let (n, first, _) = exchange(&cat, limit, |_, b| b.extend(b"x")).unwrap();
        assert_eq!((n, first), (2, false));
        retire(&cat);
        // A program that exits at once, writing to its standard error.
        let dies = CommandLine::parse("sh -c echo_oops_1>&2;exit_3").unwrap();
        let dies = CommandLine {
            words: vec!["sh".into(), "-c".into(), "echo oops >&2; exit 3".into()],
            ..dies
        };
        let t = exchange(&dies, limit, |_, b| b.extend(b"{}")).unwrap_err();
        assert_eq!(t.request, 1);
        assert!(t.what.starts_with("the program ended"), "{}", t.what);
        assert!(t.what.contains("exit status: 3"), "{}", t.what);
        assert_eq!(t.stderr, "oops");
        // A program that never answers is stopped at the limit.
        let sleeps = CommandLine::parse("sleep 30").unwrap();
        let started = Instant::now();
        let t = exchange(&sleeps, Duration::from_millis(200), |_, b| b.extend(b"{}")).unwrap_err();
        assert!(t.what.starts_with("no answer within 0.2 s"), "{}", t.what);
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
