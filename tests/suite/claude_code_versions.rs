//! Every line of the real Claude Code sessions in `../shared/data/claude-code-entire/`, one
//! session of each Claude Code version the set holds (2.0.76 to 2.1.42): what each line type
//! became, pinned. The figures were counted by a separate reading of the files (a short Python
//! script applying the importer's documented rules), not by ctxlab. Each test reads one file.

use crate::common::shared_data;
use ctxlab::cli::import::tally_text;
use ctxlab::import::{self, Format, Problems, Tally};

/// The tally of one session, or `None` (after saying so) when the shared data is absent.
fn tally_of(session: &str) -> Option<String> {
    let Some(data) = shared_data() else {
        eprintln!("skipped: ../shared/data is absent, so the Claude Code sessions are not read");
        return None;
    };
    let path = data
        .join("claude-code-entire")
        .join(format!("{session}.jsonl"));
    let mut tally = Tally::default();
    import::read_tallied(
        &path,
        Format::ClaudeCode,
        &mut Problems::strict(),
        &mut tally,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    Some(tally_text(&tally))
}

fn check(session: &str, expected: &str) {
    if let Some(got) = tally_of(session) {
        assert_eq!(got, expected, "{session}");
    }
}

#[test]
fn version_2_0_76() {
    check(
        "847ff7d2-4a55-44d7-a3f5-a3afd89f1ee1",
        "assistant: 259 lines: 177 gave 177 records (assistant 58, tool_call 119); 82 no record (thinking only, or empty)\n\
         file-history-snapshot: 16 lines; 16 not sent to the model\n\
         queue-operation: 12 lines; 12 not sent to the model\n\
         system: 8 lines; 8 not sent to the model\n\
         user: 129 lines: 129 gave 129 records (user 8, tool_result 119, summary 1, note 1)\n\
         model responses: 97\n",
    );
}

#[test]
fn version_2_1_5() {
    check(
        "deeac353-0765-4439-9056-293619a99172",
        "assistant: 278 lines: 160 gave 160 records (assistant 22, tool_call 138); 118 no record (thinking only, or empty)\n\
         file-history-snapshot: 15 lines; 15 not sent to the model\n\
         queue-operation: 2 lines; 2 not sent to the model\n\
         summary: 20 lines; 20 not sent to the model\n\
         system: 9 lines; 9 not sent to the model\n\
         user: 144 lines: 144 gave 144 records (user 5, tool_result 138, summary 1)\n\
         model responses: 118\n",
    );
}

#[test]
fn version_2_1_7() {
    check(
        "20b81bf8-77cd-4205-8ac9-727b573a70e4",
        "assistant: 77 lines: 43 gave 43 records (assistant 12, tool_call 31); 34 no record (thinking only, or empty)\n\
         file-history-snapshot: 6 lines; 6 not sent to the model\n\
         system: 7 lines; 7 not sent to the model\n\
         user: 35 lines: 35 gave 35 records (user 3, tool_result 31, summary 1)\n\
         model responses: 34\n",
    );
}

#[test]
fn version_2_1_12() {
    check(
        "85cc202e-0e74-46ce-a485-e5fcd11f7a8c",
        "assistant: 71 lines: 39 gave 39 records (assistant 9, tool_call 30); 32 no record (thinking only, or empty)\n\
         file-history-snapshot: 3 lines; 3 not sent to the model\n\
         progress: 29 lines; 29 not sent to the model\n\
         system: 5 lines; 5 not sent to the model\n\
         user: 33 lines: 33 gave 33 records (user 2, tool_result 30, summary 1)\n\
         model responses: 32\n",
    );
}

#[test]
fn version_2_1_17() {
    check(
        "79e9becd-0b83-42f1-8cb1-33375d080476",
        "assistant: 605 lines: 350 gave 350 records (assistant 103, tool_call 247); 255 no record (thinking only, or empty)\n\
         file-history-snapshot: 52 lines; 52 not sent to the model\n\
         progress: 327 lines; 327 not sent to the model\n\
         queue-operation: 20 lines; 20 not sent to the model\n\
         system: 51 lines; 51 not sent to the model\n\
         user: 295 lines: 295 gave 295 records (user 43, tool_result 247, summary 1, note 4)\n\
         model responses: 258\n",
    );
}

#[test]
fn version_2_1_25() {
    check(
        "67d765b5-4286-4ec5-b051-950466e186f0",
        "assistant: 129 lines: 101 gave 101 records (assistant 40, tool_call 61); 28 no record (thinking only, or empty)\n\
         file-history-snapshot: 10 lines; 10 not sent to the model\n\
         progress: 142 lines; 142 not sent to the model\n\
         queue-operation: 2 lines; 2 not sent to the model\n\
         system: 9 lines; 9 not sent to the model\n\
         user: 70 lines: 70 gave 70 records (user 6, tool_result 61, summary 1, note 2)\n\
         model responses: 61\n",
    );
}

#[test]
fn version_2_1_29() {
    check(
        "062a8bdd-4322-4ffa-bc38-3e8b8bfb5a56",
        "assistant: 229 lines: 201 gave 201 records (assistant 74, tool_call 127); 28 no record (thinking only, or empty)\n\
         file-history-snapshot: 38 lines; 38 not sent to the model\n\
         pr-link: 1 lines; 1 not sent to the model\n\
         progress: 293 lines; 293 not sent to the model\n\
         queue-operation: 4 lines; 4 not sent to the model\n\
         system: 25 lines; 25 not sent to the model\n\
         user: 157 lines: 157 gave 159 records (user 25, tool_result 126, summary 1, note 7)\n\
         model responses: 134\n",
    );
}

#[test]
fn version_2_1_31() {
    check(
        "f022dad1-9896-4a6c-bb91-0d1efb580b70",
        "assistant: 544 lines: 321 gave 321 records (assistant 99, tool_call 222); 223 no record (thinking only, or empty)\n\
         file-history-snapshot: 35 lines; 35 not sent to the model\n\
         progress: 178 lines; 178 not sent to the model\n\
         queue-operation: 10 lines; 10 not sent to the model\n\
         system: 48 lines; 48 not sent to the model\n\
         user: 258 lines: 258 gave 258 records (user 34, tool_result 222, summary 1, note 1)\n\
         model responses: 232\n",
    );
}

#[test]
fn version_2_1_33() {
    check(
        "03a1382e-ecd5-42c4-b3d4-5c659e165904",
        "assistant: 335 lines: 306 gave 306 records (assistant 110, tool_call 196); 28 no record (thinking only, or empty); 1 written by Claude Code, not a model (no call)\n\
         file-history-snapshot: 35 lines; 35 not sent to the model\n\
         progress: 256 lines; 256 not sent to the model\n\
         queue-operation: 4 lines; 4 not sent to the model\n\
         system: 42 lines; 42 not sent to the model\n\
         user: 230 lines: 230 gave 234 records (user 36, tool_result 196, summary 1, note 1)\n\
         model responses: 184\n",
    );
}

#[test]
fn version_2_1_36() {
    check(
        "b6b20c21-d3cb-42a4-9a55-bb2dbb2212e4",
        "assistant: 225 lines: 211 gave 211 records (assistant 71, tool_call 140); 14 no record (thinking only, or empty)\n\
         file-history-snapshot: 15 lines; 15 not sent to the model\n\
         progress: 346 lines; 346 not sent to the model\n\
         queue-operation: 8 lines; 8 not sent to the model\n\
         system: 22 lines; 22 not sent to the model\n\
         user: 154 lines: 154 gave 156 records (user 14, tool_result 139, summary 1, note 2)\n\
         model responses: 130\n",
    );
}

#[test]
fn version_2_1_37() {
    check(
        "545b45d4-729e-4d0b-8e6b-45cb65d43f00",
        "assistant: 301 lines: 300 gave 300 records (assistant 108, tool_call 192); 1 written by Claude Code, not a model (no call)\n\
         file-history-snapshot: 19 lines; 19 not sent to the model\n\
         pr-link: 1 lines; 1 not sent to the model\n\
         progress: 324 lines; 324 not sent to the model\n\
         queue-operation: 2 lines; 2 not sent to the model\n\
         system: 14 lines; 14 not sent to the model\n\
         user: 207 lines: 207 gave 207 records (user 10, tool_result 191, summary 1, note 5)\n\
         model responses: 156\n",
    );
}

#[test]
fn version_2_1_38() {
    check(
        "aa4038a5-34b6-41e4-8541-9cca654dcbc5",
        "assistant: 229 lines: 215 gave 215 records (assistant 86, tool_call 129); 14 no record (thinking only, or empty)\n\
         file-history-snapshot: 12 lines; 12 not sent to the model\n\
         progress: 550 lines; 550 not sent to the model\n\
         system: 12 lines; 12 not sent to the model\n\
         user: 138 lines: 138 gave 138 records (user 8, tool_result 129, summary 1)\n\
         model responses: 116\n",
    );
}

#[test]
fn version_2_1_39() {
    check(
        "533ff7a3-d390-41ff-b9e8-1b09fb4c2fe2",
        "assistant: 324 lines: 282 gave 282 records (assistant 104, tool_call 178); 42 no record (thinking only, or empty)\n\
         file-history-snapshot: 20 lines; 20 not sent to the model\n\
         progress: 608 lines; 608 not sent to the model\n\
         system: 5 lines; 5 not sent to the model\n\
         user: 183 lines: 183 gave 183 records (user 4, tool_result 178, summary 1)\n\
         model responses: 138\n",
    );
}

#[test]
fn version_2_1_42() {
    check(
        "c010174c-a7cd-4bcc-b7d4-61258d6c463f",
        "assistant: 176 lines: 156 gave 156 records (assistant 50, tool_call 106); 20 no record (thinking only, or empty)\n\
         file-history-snapshot: 11 lines; 11 not sent to the model\n\
         pr-link: 1 lines; 1 not sent to the model\n\
         progress: 225 lines; 225 not sent to the model\n\
         queue-operation: 4 lines; 4 not sent to the model\n\
         system: 9 lines; 9 not sent to the model\n\
         user: 113 lines: 113 gave 113 records (user 7, tool_result 104, summary 1, note 1)\n\
         model responses: 93\n",
    );
}
