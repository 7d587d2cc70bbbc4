//! No path the user did not hand over is replaced: an `--out` (`import`, `generate`,
//! `summaries export`) or the chart files of `summaries judge --chart DIR` that exist are
//! refused with one line before anything is written; `--force` replaces only a plain file,
//! never a folder, a FIFO, a device node or a link. Each case checks what was there is unchanged,
//! by content or by type.

use crate::common::*;
use std::os::unix::fs::FileTypeExt as _;
use std::path::{Path, PathBuf};

/// A FIFO at `path` (`mkfifo`).
fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

/// A character device node at `path` with /dev/null's numbers (1, 3), made inside the test's
/// own folder so no machine's device is ever at stake; `None` where nodes cannot be made (not
/// root).
fn mknod_null(path: &Path) -> Option<PathBuf> {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    let made = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o600, libc::makedev(1, 3)) };
    (made == 0).then(|| path.to_path_buf())
}

/// What is at `path`: its type and, for a plain file, its bytes.
fn state(path: &Path) -> (String, Option<Vec<u8>>) {
    let m = std::fs::symlink_metadata(path).unwrap();
    let t = m.file_type();
    let kind = if t.is_symlink() {
        "link"
    } else if t.is_dir() {
        "folder"
    } else if t.is_fifo() {
        "fifo"
    } else if t.is_char_device() {
        "device"
    } else {
        "file"
    };
    let bytes = (kind == "file").then(|| std::fs::read(path).unwrap());
    (kind.to_string(), bytes)
}

/// Nothing in `dir` but `expected` (no temporary left beside a refused path).
fn only(dir: &Path, mut expected: Vec<&str>) {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    expected.sort();
    assert_eq!(names, expected);
}

/// The `--out` commands, each writing to `out` (the generate one from a small experiment).
fn writers(d: &Path, out: &str) -> Vec<Vec<String>> {
    std::fs::write(
        d.join("gen.toml"),
        "name = \"g\"\nseed = 1\n[histories]\ngenerate = { count = 2, records = [3, 5], required_share = 0.2 }\n[sweep]\nstrategies = [\"recent\"]\nbudgets = [50]\n",
    )
    .unwrap();
    [
        vec![
            "import",
            &import_fixture("claude-session.jsonl"),
            "--format",
            "claude-code",
            "--out",
            out,
        ],
        vec!["generate", "gen.toml", "--out", out],
    ]
    .iter()
    .map(|a| a.iter().map(|s| s.to_string()).collect())
    .collect()
}

fn run(d: &Path, args: &[String], force: bool) -> std::process::Output {
    let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
    if force {
        args.push("--force");
    }
    ctxlab(d, &args)
}

#[test]
fn an_existing_out_file_is_refused_unless_forced_and_then_only_a_plain_file_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for args in writers(d, "mine.jsonl") {
        // The user's file is there: refused, byte for byte unchanged, nothing beside it.
        std::fs::write(d.join("mine.jsonl"), "the user's notes\n").unwrap();
        let o = run(d, &args, false);
        assert_fails_with(
            &o,
            &["mine.jsonl: already exists; choose another path or remove it, or pass --force to replace it (nothing was written)"],
        );
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
        assert_eq!(
            state(&d.join("mine.jsonl")),
            ("file".into(), Some(b"the user's notes\n".to_vec()))
        );
        only(d, vec!["gen.toml", "mine.jsonl"]);
        // Forced, a plain file is replaced by the histories.
        let o = run(d, &args, true);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(ctxlab::history::load_jsonl(&d.join("mine.jsonl")).is_ok());
        only(d, vec!["gen.toml", "mine.jsonl"]);
        std::fs::remove_file(d.join("mine.jsonl")).unwrap();
    }
}

#[test]
fn a_fifo_a_folder_a_link_or_a_device_at_out_is_never_replaced_even_forced() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    mkfifo(&d.join("pipe"));
    std::fs::create_dir(d.join("folder")).unwrap();
    std::fs::write(d.join("target.txt"), "kept").unwrap();
    std::os::unix::fs::symlink("target.txt", d.join("link")).unwrap();
    let device = mknod_null(&d.join("null"));
    if device.is_none() {
        eprintln!("device node not made (not root): the device case is checked on /dev/null by reading only");
    }
    let mut cases = vec![
        ("pipe", "a FIFO"),
        ("folder", "a folder"),
        ("link", "a symbolic link"),
    ];
    if device.is_some() {
        cases.push(("null", "a device node"));
    }
    for (name, what) in cases {
        let before = state(&d.join(name));
        for args in writers(d, name) {
            for force in [false, true] {
                let o = run(d, &args, force);
                assert_fails_with(
                    &o,
                    &[&format!("{name}: already exists and is {what}, which ctxlab never replaces, --force or not")],
                );
                assert_eq!(state(&d.join(name)), before, "{name} changed ({args:?})");
            }
        }
        assert_eq!(
            state(&d.join("target.txt")),
            ("file".into(), Some(b"kept".to_vec()))
        );
    }
    let mut expected = vec!["folder", "gen.toml", "link", "pipe", "target.txt"];
    if device.is_some() {
        expected.push("null");
    }
    only(d, expected);
    // The machine's /dev/null: the check that refuses it reads its type only and writes
    // nothing (the commands above make that check before anything is read or written).
    let e = ctxlab::output_file::check(
        Path::new("/dev/null"),
        ctxlab::output_file::Existing::Replace,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("/dev/null: already exists and is a device node"),
        "{e}"
    );
    assert!(std::fs::symlink_metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
}

#[test]
fn judge_charts_never_replace_the_user_s_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The judge's hand-worked session: one compaction summary.
    std::fs::write(d.join("s.jsonl"), crate::judge::SESSION).unwrap();
    let charts = d.join("figs/charts");
    std::fs::create_dir_all(&charts).unwrap();
    std::fs::write(charts.join("judge.svg"), "<svg>the user's</svg>").unwrap();
    let judge = |force: bool| {
        let mut args = vec!["summaries", "judge", "s.jsonl", "--chart", "figs"];
        if force {
            args.push("--force");
        }
        ctxlab(d, &args)
    };
    let o = judge(false);
    assert_fails_with(
        &o,
        &["judge.svg: already exists; choose another path or remove it, or pass --force"],
    );
    assert_eq!(
        state(&charts.join("judge.svg")),
        ("file".into(), Some(b"<svg>the user's</svg>".to_vec()))
    );
    only(&charts, vec!["judge.svg"]);
    // A FIFO at judge.png: never replaced, --force or not; judge.svg untouched either way.
    mkfifo(&charts.join("judge.png"));
    for force in [false, true] {
        let o = judge(force);
        assert_fails_with(&o, &["judge.png: already exists and is a FIFO"]);
        assert_eq!(state(&charts.join("judge.png")).0, "fifo");
        assert_eq!(
            state(&charts.join("judge.svg")).1,
            Some(b"<svg>the user's</svg>".to_vec())
        );
    }
    // Plain files, forced: replaced by the charts.
    std::fs::remove_file(charts.join("judge.png")).unwrap();
    std::fs::write(charts.join("judge.png"), "old").unwrap();
    let o = judge(true);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read(charts.join("judge.png"))
        .unwrap()
        .starts_with(b"\x89PNG"));
    assert!(std::fs::read_to_string(charts.join("judge.svg"))
        .unwrap()
        .contains("<svg"));
    only(&charts, vec!["judge.png", "judge.svg"]);
}

#[test]
fn summaries_export_refuses_a_fifo_and_a_link_as_it_refuses_a_file() {
    use ctxlab::llm::batch::{write_requests, Existing};
    use ctxlab::llm::SummaryRequest;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let request = SummaryRequest {
        prompt: "P".into(),
        input: "x".into(),
        model: "m".into(),
        max_tokens: None,
    };
    mkfifo(&d.join("pipe"));
    std::fs::write(d.join("target"), "kept").unwrap();
    std::os::unix::fs::symlink("target", d.join("link")).unwrap();
    for (name, existing) in [
        ("pipe", Existing::Refuse),
        ("pipe", Existing::Replace),
        ("link", Existing::Replace),
    ] {
        let before = state(&d.join(name));
        let e = write_requests(&d.join(name), std::slice::from_ref(&request), existing)
            .unwrap_err()
            .to_string();
        assert!(e.contains("which ctxlab never replaces"), "{e}");
        assert_eq!(state(&d.join(name)), before);
    }
    assert_eq!(std::fs::read(d.join("target")).unwrap(), b"kept");
    only(d, vec!["link", "pipe", "target"]);
}
