//! `ctxlab summaries import|fill`: answers to summary requests into the cache a sweep's
//! `llm` summariser reads (see [`crate::llm`]).

use crate::llm::{self, batch, Endpoint, SummaryCache};
use anyhow::Result;
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct SummariesArgs {
    #[command(subcommand)]
    pub command: SummariesCommand,
}

#[derive(Subcommand, Debug)]
pub enum SummariesCommand {
    /// Write the summary requests an experiment's `llm` summarisers need and their cache lacks
    /// (OpenAI Batch input format).
    Export(super::summaries_export::ExportArgs),
    /// Store a batch service's answers (OpenAI Batch output) in a cache folder, checked against
    /// the requests file they answer; all or nothing.
    Import(SummariesImportArgs),
    /// Ask an OpenAI-compatible endpoint (vLLM, llama.cpp, ollama; plain http) for the answers
    /// a cache folder lacks.
    Fill(FillArgs),
    /// Every offline summariser against the real compaction summaries of transcripts, on the
    /// spans they replaced, at their size: the needed facts each keeps beside the real one's.
    Judge(super::summaries_judge::JudgeArgs),
}

#[derive(Args, Debug)]
pub struct SummariesImportArgs {
    /// The Batch output file (JSONL): one answer a line.
    pub responses: PathBuf,
    /// The Batch input file the answers are for (as `summaries export` wrote it).
    #[arg(long)]
    pub requests: PathBuf,
    /// The cache folder to store the answers in (made if absent).
    #[arg(long)]
    pub into: PathBuf,
}

#[derive(Args, Debug)]
pub struct FillArgs {
    /// The Batch input file (JSONL) of the requests to answer.
    pub requests: PathBuf,
    /// The endpoint: http://host:port, http://host:port/v1 or …/v1/chat/completions.
    #[arg(long)]
    pub url: String,
    /// The model to ask for; every request must name it. Default: each request's own.
    #[arg(long)]
    pub model: Option<String>,
    /// The environment variable holding the API key (sent as a Bearer token).
    #[arg(long)]
    pub key_env: Option<String>,
    /// Requests in flight at once.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub concurrency: u64,
    /// Tries again after a timeout, a 408, a 429 or a 5xx status (at most 10), waiting what a
    /// `Retry-After` asks (up to 120 s) or a doubling backoff.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(0..=crate::llm::endpoint::MAX_RETRIES as i64))]
    pub retries: u32,
    /// Seconds one try may take.
    #[arg(long, default_value_t = 300.0, value_parser = seconds)]
    pub timeout: f64,
    /// The cache folder to store the answers in (made if absent).
    #[arg(long)]
    pub into: PathBuf,
}

fn seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 => Ok(s),
        _ => Err(format!(
            "{text:?} is not a duration: expected seconds above 0, e.g. 300"
        )),
    }
}

pub fn run(a: SummariesArgs) -> Result<()> {
    match a.command {
        SummariesCommand::Export(a) => super::summaries_export::export(a),
        SummariesCommand::Import(a) => import(a),
        SummariesCommand::Fill(a) => fill(a),
        SummariesCommand::Judge(a) => super::summaries_judge::run(a),
    }
}

fn import(a: SummariesImportArgs) -> Result<()> {
    let r = llm::import(&a.responses, &a.requests, &a.into)?;
    crate::sayln!(
        "{} answers read, for {} distinct requests: {} stored in {}, {} already there",
        r.responses,
        r.requests,
        r.stored,
        a.into.display(),
        r.already
    );
    if r.unanswered > 0 {
        crate::sayln!(
            "{} of the {} requests still have no answer in {}",
            r.unanswered,
            r.requests,
            a.into.display()
        );
    }
    Ok(())
}

fn fill(a: FillArgs) -> Result<()> {
    let requests = batch::read_requests(&a.requests)?;
    let cache = SummaryCache::open(&a.into)?;
    let distinct: std::collections::HashSet<String> = requests.iter().map(|r| r.hash()).collect();
    let endpoint = Endpoint {
        model: a.model,
        api_key_env: a.key_env,
        concurrency: a.concurrency as usize,
        retries: a.retries,
        timeout: std::time::Duration::from_secs_f64(a.timeout),
        ..Endpoint::new(a.url)
    };
    let stored = endpoint.fill(&requests, &cache)?;
    crate::sayln!(
        "{} distinct requests: {stored} answered by {} and stored in {}, {} already there",
        distinct.len(),
        endpoint.url,
        a.into.display(),
        distinct.len() - stored
    );
    Ok(())
}
