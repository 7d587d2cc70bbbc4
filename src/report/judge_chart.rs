//! `judge.png` / `judge.svg`: each offline summariser's share of the needed facts kept against
//! the real summary's, one point per real compaction summary, one panel per summariser, with
//! the diagonal on which a summariser keeps exactly what the real summary kept.

use super::charts::figure_files;
use super::publish;
use crate::figures::figure::{Axis, Figure, LegendEntry, Line, LineStyle, Panel, Point};
use crate::figures::palette;
use crate::summaries_judge::Judgement;
use crate::tables::judge::CandidateVerdict;
use std::path::{Path, PathBuf};

/// Draws the chart and writes it into `dir/charts/`, PNG then SVG; returns the paths. A
/// folder of the user's: what may be at those paths already is `existing`'s to say.
pub fn render(
    dir: &Path,
    j: &Judgement,
    verdicts: &[CandidateVerdict],
    existing: crate::output_file::Existing,
) -> crate::error::Result<Vec<PathBuf>> {
    let figure = figure(j, verdicts);
    let files = figure_files(&figure)?;
    Ok(publish::write_files(dir, &files, existing)?)
}

fn figure(j: &Judgement, verdicts: &[CandidateVerdict]) -> Figure {
    let diagonal = LineStyle {
        colour: palette::NEUTRAL,
        marker: palette::Marker::Cross,
        dash: Some((6, 6)),
    };
    let point = |s: usize| LineStyle {
        colour: palette::colour(s),
        marker: palette::marker(s, 0),
        dash: None,
    };
    let panels = verdicts
        .iter()
        .enumerate()
        .map(|(c, v)| {
            // One point per summary: a gap between points, so no line joins them.
            let points = j
                .summaries
                .iter()
                .filter_map(|s| {
                    s.kept[c].map(|(k, _)| Point {
                        x: s.real_share(),
                        y: k,
                        band: None,
                        hollow: false,
                        sparse: false,
                    })
                })
                .flat_map(|p| [Some(p), None])
                .collect();
            let ends = |x: f64| {
                Some(Point {
                    x,
                    y: x,
                    band: None,
                    hollow: false,
                    sparse: false,
                })
            };
            Panel {
                title: format!(
                    "{} (mean difference {:+.3}, r = {})",
                    v.label,
                    v.diff_mean,
                    v.correlation.map_or("—".into(), |r| format!("{r:.2}"))
                ),
                lines: vec![
                    Line {
                        style: diagonal,
                        points: vec![ends(0.0), ends(1.0)],
                    },
                    Line {
                        style: point(c),
                        points,
                    },
                ],
            }
        })
        .collect();
    let legend = verdicts
        .iter()
        .enumerate()
        .map(|(c, v)| LegendEntry {
            label: v.label.clone(),
            style: point(c),
        })
        .chain(std::iter::once(LegendEntry {
            label: "keeps what the real summary kept".into(),
            style: diagonal,
        }))
        .collect();
    Figure {
        stem: "judge".into(),
        title: "Offline summarisers against real compaction summaries".into(),
        subtitle: format!(
            "One point per real summary ({} judged; {} left out whose replaced span the file \
             does not hold, {} without needed facts): the share of the span's needed facts (used \
             again after the summary) each keeps, on the very span the real summary replaced, at \
             its size.",
            j.summaries.len(),
            j.partial,
            j.without_needs
        ),
        x: Axis::unit("needed facts the real summary kept (share)"),
        y: Axis::unit("needed facts the summariser kept (share)"),
        columns: verdicts.len().clamp(1, 3),
        panels,
        legend_title: "summariser".into(),
        legend,
        legend_group: 1,
        band_label: String::new(),
    }
}
