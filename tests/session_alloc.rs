//! A session allocates nothing once its scratch has grown: sweeps run many sessions per worker.

use ctxlab::history::{CostedHistory, History, Kind, Record};
use ctxlab::session::{simulate, SessionConfig, SessionScratch};
use ctxlab::{CostModel, Strategy};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

thread_local! {
    // Per thread: only the test's own allocations count, not the harness's other threads'.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.with(Cell::get) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        if COUNTING.with(Cell::get) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        unsafe { System.realloc(ptr, layout, size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// System prompt, task, then turns of assistant / tool call / tool result / user message, so
/// the strategy's view alternates records with and without a tool.
fn history(turns: usize, name: &str) -> CostedHistory {
    let mut records = vec![
        Record::new(1, "s".repeat(30)).kind(Kind::System),
        Record::new(2, "t".repeat(40))
            .kind(Kind::User)
            .required(true),
    ];
    for i in 0..turns {
        let id = 3 + 4 * i as u64;
        records.push(Record::new(id, "a".repeat(20 + i % 7)).kind(Kind::Assistant));
        records.push(
            Record::new(id + 1, "c".repeat(10))
                .kind(Kind::ToolCall)
                .tool("grep"),
        );
        records.push(
            Record::new(id + 2, "r".repeat(50 + 13 * (i % 5)))
                .kind(Kind::ToolResult)
                .tool("bash")
                .required(i % 6 == 2),
        );
        records.push(Record::new(id + 3, "u".repeat(15)).kind(Kind::User));
    }
    CostedHistory::new(&History::new(name, records), CostModel::Chars)
}

#[test]
fn warm_sessions_do_not_allocate() {
    let a = history(60, "a");
    let b = history(25, "b");
    let cfg = SessionConfig {
        note_rate: 0.3,
        ..SessionConfig::new(3000, 0.6).unwrap()
    };
    let strategies = [
        Strategy::parse("recent").unwrap(),
        Strategy::parse("required(fill=skip, keep_recent=3)").unwrap(),
    ];
    let mut scratch = SessionScratch::default();
    let run = |scratch: &mut SessionScratch| {
        let mut compactions = 0;
        for s in &strategies {
            for (h, stream) in [(&a, 1), (&b, 2), (&a, 3)] {
                compactions += simulate(h, &h.truth, s, &cfg, stream, scratch)
                    .run
                    .compactions;
            }
        }
        compactions
    };
    let warm = run(&mut scratch);
    assert!(warm > 10, "{warm}");
    ALLOCATIONS.store(0, Ordering::Relaxed);
    COUNTING.with(|c| c.set(true));
    let again = run(&mut scratch);
    COUNTING.with(|c| c.set(false));
    assert_eq!(again, warm);
    assert_eq!(ALLOCATIONS.load(Ordering::Relaxed), 0);
}
