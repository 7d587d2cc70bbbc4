//! A figure of small multiples described as data, laid out once in pixels and drawn by one
//! generic function on any plotters backend, so the PNG and the SVG show the same thing.
//!
//! Under the embedded-font renderer plotters draws rotated text unrotated, so no text here is
//! rotated: the y-axis label reads horizontally above the panels, the x-axis label below them.
//! The legend has its own rows below the panels and never covers data.

use super::fonts;
use super::labels;
use super::palette::Marker;
use crate::error::DrawError;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::ops::Range;

/// Width of every figure in pixels (PNG) and user units (SVG).
pub const WIDTH: u32 = 1600;

// Text sizes are chosen for the figure printed at a paper's text width (about 16 cm), where
// 1600 px make 100 px per cm: 22 px ticks print at about 6 pt.
const PAD: i32 = 28;
const TITLE_SIZE: f64 = 38.0;
const SUBTITLE_SIZE: f64 = 22.0;
const SUBTITLE_LINE: i32 = 30;
const AXIS_LABEL_SIZE: f64 = 25.0;
const PANEL_TITLE_SIZE: f64 = 24.0;
const TICK_SIZE: f64 = 22.0;
const LEGEND_SIZE: f64 = 23.0;
const LEGEND_ROW: i32 = 36;
const LEGEND_SWATCH: i32 = 50;
const MAX_PANEL_WIDTH: i32 = 820;
const LEGEND_GAP: i32 = 40;
const LINE_WIDTH: u32 = 3;
const MARKER_SIZE: i32 = 6;
const BAND_OPACITY: f64 = 0.16;
const TEXT: RGBColor = RGBColor(0x20, 0x20, 0x20);
const MUTED: RGBColor = RGBColor(0x55, 0x55, 0x55);
const GRID: RGBColor = RGBColor(0xE3, 0xE3, 0xE3);
const AXIS: RGBColor = RGBColor(0x80, 0x80, 0x80);

/// One axis shared by every panel.
#[derive(Debug, Clone)]
pub struct Axis {
    /// What is measured and in which unit.
    pub label: String,
    pub min: f64,
    pub max: f64,
    /// Where ticks and grid lines go.
    pub ticks: Vec<f64>,
}

impl Axis {
    /// A 0–1 axis with ticks every 0.2, padded a little so marks at 0 and 1 are not cut.
    pub fn unit(label: impl Into<String>) -> Axis {
        Axis {
            label: label.into(),
            min: -0.03,
            max: 1.03,
            ticks: (0..=5).map(|i| i as f64 / 5.0).collect(),
        }
    }

    fn clamp(&self, v: f64) -> f64 {
        v.clamp(self.min, self.max)
    }

    fn coord(&self) -> Ticked {
        Ticked {
            min: self.min,
            max: self.max,
            ticks: self.ticks.clone(),
        }
    }
}

/// A linear f64 axis whose grid lines and tick labels sit exactly at given values.
/// (plotters' own `with_key_points` on an f64 range does not offer label formatting.)
struct Ticked {
    min: f64,
    max: f64,
    ticks: Vec<f64>,
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let share = (value - self.min) / (self.max - self.min);
        limit.0 + (share * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        // Bold points only: one grid line per tick, no minor lines.
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.min..self.max
    }
}

/// How a series looks: colour for the strategy, marker and dash for keep_recent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LineStyle {
    pub colour: RGBColor,
    pub marker: Marker,
    pub dash: Option<(u32, u32)>,
}

/// One point of a line, with its 95 % interval when it has one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    pub band: Option<(f64, f64)>,
    /// Drawn as a ring instead of a filled mark: the value rests on part of its cells only
    /// (e.g. some were infeasible).
    pub hollow: bool,
    /// Circled: the value rests on fewer than a tenth of its histories.
    pub sparse: bool,
}

/// A series in one panel; `None` points are gaps (no value there), where the line breaks.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub style: LineStyle,
    pub points: Vec<Option<Point>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    pub title: String,
    pub lines: Vec<Line>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LegendEntry {
    pub label: String,
    pub style: LineStyle,
}

/// A linear axis over `[lo, hi]` (from 0 when `from_zero`) with about five ticks at round
/// steps (1, 2, 2.5 or 5 × a power of ten), padded 3 % so marks at the ends are not cut.
pub(crate) fn nice_axis(label: String, lo: f64, hi: f64, from_zero: bool) -> Axis {
    let lo = if from_zero { 0.0 } else { lo };
    let hi = if hi > lo { hi } else { lo + 1.0 };
    let raw = (hi - lo) / 5.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * magnitude);
    let start = (lo / step).floor() * step;
    let end = (hi / step).ceil() * step;
    let steps = ((end - start) / step).round() as usize;
    let pad = (end - start) * 0.03;
    Axis {
        label,
        min: start - pad,
        max: end + pad,
        ticks: (0..=steps).map(|i| start + i as f64 * step).collect(),
    }
}

/// Bytes drawing a figure of `panels` panels of `lines` lines of `points` points takes at
/// most, for the memory estimate of a run: its bitmap (3 bytes a pixel, the layout's own
/// heights: four panels a row at most), its PNG and its SVG text, each held at once.
pub fn memory_bound(panels: usize, lines: usize, points: usize) -> u64 {
    let panels = panels.max(1) as u64;
    let columns = panels.min(4);
    let inner = u64::from(WIDTH) - 2 * PAD as u64;
    let panel_width = (inner / columns).min(MAX_PANEL_WIDTH as u64);
    let panel_height = (panel_width * 8 / 10).clamp(340, 520);
    // Title, subtitle, axis labels and a legend of a row per 4 lines.
    let height = panels.div_ceil(columns) * panel_height + 400 + (lines as u64).div_ceil(4) * 36;
    let bitmap = u64::from(WIDTH) * height * 3;
    // SVG: a panel's frame, ticks and title; a line's path and markers, ~120 bytes a point.
    let svg = panels * (6 << 10) + panels * lines as u64 * (200 + points as u64 * 120);
    bitmap + bitmap / 4 + 2 * svg
}

/// A whole chart: title, shared axes, panels in a grid, legend.
#[derive(Debug, Clone)]
pub struct Figure {
    /// File name without extension, e.g. `retention_vs_noise`.
    pub stem: std::borrow::Cow<'static, str>,
    pub title: String,
    pub subtitle: String,
    pub x: Axis,
    pub y: Axis,
    /// Panels per row.
    pub columns: usize,
    pub panels: Vec<Panel>,
    pub legend_title: String,
    pub legend: Vec<LegendEntry>,
    /// Entries that belong on one legend row (one strategy's keep_recent values): the legend's
    /// column count is a multiple of it when the width allows.
    pub legend_group: usize,
    /// What the shaded bands are, for the legend.
    pub band_label: String,
}

/// Pixel positions of everything, computed once for both backends.
struct Layout {
    height: u32,
    subtitle_lines: Vec<String>,
    y_label_top: i32,
    grid_top: i32,
    panel_width: i32,
    panel_height: i32,
    x_label_top: i32,
    legend_left: i32,
    legend_top: i32,
    /// Width of one legend entry; entries flow left to right in rows.
    legend_entry_width: i32,
    legend_columns: usize,
}

fn font(size: f64) -> FontDesc<'static> {
    FontDesc::new(FontFamily::SansSerif, size, FontStyle::Normal)
}

fn text_width(text: &str, size: f64) -> i32 {
    // The estimate only fails when the font is missing; registration is checked first.
    font(size)
        .box_size(text)
        .map(|(w, _)| w as i32)
        .unwrap_or((text.chars().count() as f64 * size * 0.6) as i32)
}

/// Splits `text` into lines no wider than `width` pixels, at spaces.
fn wrap(text: &str, size: f64, width: i32) -> Vec<String> {
    let mut lines = Vec::new();
    let mut current = String::new();
    for word in text.split(' ') {
        let candidate = if current.is_empty() {
            word.to_string()
        } else {
            format!("{current} {word}")
        };
        if !current.is_empty() && text_width(&candidate, size) > width {
            lines.push(std::mem::replace(&mut current, word.to_string()));
        } else {
            current = candidate;
        }
    }
    if !current.is_empty() {
        lines.push(current);
    }
    lines
}

impl Figure {
    fn rows(&self) -> usize {
        self.panels.len().div_ceil(self.columns.max(1))
    }

    /// Legend items: one per series, then the band.
    fn legend_items(&self) -> usize {
        self.legend.len() + 1
    }

    fn layout(&self) -> Layout {
        let width = WIDTH as i32;
        let inner = width - 2 * PAD;

        let subtitle_lines = wrap(&self.subtitle, SUBTITLE_SIZE, inner);
        let subtitle_top = PAD + TITLE_SIZE as i32 + 12;
        let y_label_top = subtitle_top + subtitle_lines.len() as i32 * SUBTITLE_LINE + 16;
        let grid_top = y_label_top + AXIS_LABEL_SIZE as i32 + 10;
        let columns = self.columns.max(1) as i32;
        // A lone panel stretched over the full width reads badly; cap it.
        let panel_width = (inner / columns).min(MAX_PANEL_WIDTH);
        let panel_height = ((panel_width as f64 * 0.8) as i32).clamp(340, 520);
        let x_label_top = grid_top + self.rows() as i32 * panel_height + 6;

        let longest = self
            .legend
            .iter()
            .map(|e| text_width(&e.label, LEGEND_SIZE))
            .chain([
                text_width(&self.band_label, LEGEND_SIZE),
                text_width(&self.legend_title, LEGEND_SIZE),
            ])
            .max()
            .unwrap_or(0);
        let legend_entry_width = LEGEND_SWATCH + 12 + longest + 40;
        let used_width = panel_width * self.columns.min(self.panels.len()).max(1) as i32;
        let x_label_bottom = x_label_top + AXIS_LABEL_SIZE as i32 + 10;

        // The legend never covers data: beside the panels when they leave room, else below
        // them in as many columns as the longest label allows.
        let beside = inner - used_width - LEGEND_GAP >= legend_entry_width;
        let (legend_left, legend_top, legend_columns) = if beside {
            (PAD + used_width + LEGEND_GAP, grid_top, 1)
        } else {
            let fit = (inner / legend_entry_width).max(1) as usize;
            let group = self.legend_group.max(1);
            let columns = if fit >= group {
                fit / group * group
            } else {
                fit
            };
            (
                PAD + 6,
                x_label_bottom + 16,
                columns.min(self.legend_items()),
            )
        };
        let legend_rows = self.legend_items().div_ceil(legend_columns) as i32;
        // The legend's title takes one row.
        let legend_bottom = legend_top + (legend_rows + 1) * LEGEND_ROW;
        let height = legend_bottom.max(x_label_bottom) + PAD;
        Layout {
            height: height as u32,
            subtitle_lines,
            y_label_top,
            grid_top,
            panel_width,
            panel_height,
            x_label_top,
            legend_left,
            legend_top,
            legend_entry_width,
            legend_columns,
        }
    }

    /// The figure's size in pixels.
    pub fn size(&self) -> (u32, u32) {
        (WIDTH, self.layout().height)
    }

    /// Renders the figure as a PNG file's bytes.
    pub fn to_png(&self) -> Result<Vec<u8>, DrawError> {
        fonts::ensure_registered()?;
        let (w, h) = self.size();
        let mut pixels = vec![0u8; w as usize * h as usize * 3];
        {
            let root = BitMapBackend::with_buffer(&mut pixels, (w, h)).into_drawing_area();
            self.draw(&root)?;
            root.present().map_err(|e| e.to_string())?;
        }
        encode_png(&pixels, w, h)
    }

    /// Renders the figure as an SVG document; text stays text.
    pub fn to_svg(&self) -> Result<String, DrawError> {
        fonts::ensure_registered()?;
        let size = self.size();
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
            self.draw(&root)?;
            root.present().map_err(|e| e.to_string())?;
        }
        Ok(svg)
    }

    /// Draws the whole figure on `root`, whatever the backend.
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), DrawError> {
        let e = |e: DrawingAreaErrorKind<DB::ErrorType>| DrawError(e.to_string());
        let layout = self.layout();
        root.fill(&WHITE).map_err(e)?;

        let left_top = Pos::new(HPos::Left, VPos::Top);
        let text = |s: &str, at: (i32, i32), size: f64, colour: &RGBColor, pos: Pos| {
            root.draw(&Text::new(
                s.to_string(),
                at,
                TextStyle::from(font(size)).color(colour).pos(pos),
            ))
            .map_err(e)
        };

        text(&self.title, (PAD, PAD), TITLE_SIZE, &TEXT, left_top)?;
        for (i, line) in layout.subtitle_lines.iter().enumerate() {
            let top = PAD + TITLE_SIZE as i32 + 12 + i as i32 * SUBTITLE_LINE;
            text(line, (PAD, top), SUBTITLE_SIZE, &MUTED, left_top)?;
        }
        text(
            &format!("↑ {}", self.y.label),
            (PAD + 6, layout.y_label_top),
            AXIS_LABEL_SIZE,
            &TEXT,
            left_top,
        )?;
        let used_columns = self.columns.min(self.panels.len()).max(1) as i32;
        let x_label = format!("{} →", self.x.label);
        // Centred under the panels, unless that would push it past the left edge (a long
        // label under a single panel): then it starts at the margin.
        let centre = PAD + layout.panel_width * used_columns / 2;
        let (x, h_pos) = if centre - text_width(&x_label, AXIS_LABEL_SIZE) / 2 < PAD {
            (PAD, HPos::Left)
        } else {
            (centre, HPos::Center)
        };
        text(
            &x_label,
            (x, layout.x_label_top),
            AXIS_LABEL_SIZE,
            &TEXT,
            Pos::new(h_pos, VPos::Top),
        )?;

        for (i, panel) in self.panels.iter().enumerate() {
            let row = (i / self.columns.max(1)) as i32;
            let column = (i % self.columns.max(1)) as i32;
            let left = PAD + column * layout.panel_width;
            let top = layout.grid_top + row * layout.panel_height;
            let area = root.clone().shrink(
                (left, top),
                (layout.panel_width as u32, layout.panel_height as u32),
            );
            self.draw_panel(&area, panel)?;
        }

        self.draw_legend(root, &layout)
    }

    fn draw_panel<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        panel: &Panel,
    ) -> Result<(), DrawError> {
        let e = |e: DrawingAreaErrorKind<DB::ErrorType>| DrawError(e.to_string());
        let mut chart = ChartBuilder::on(area)
            .caption(
                &panel.title,
                TextStyle::from(font(PANEL_TITLE_SIZE)).color(&TEXT),
            )
            .margin_top(2)
            .margin_bottom(4)
            .margin_left(4)
            .margin_right(22)
            .x_label_area_size(40)
            .y_label_area_size(58)
            .build_cartesian_2d(self.x.coord(), self.y.coord())
            .map_err(e)?;
        let format_tick = |v: &f64| labels::tick(*v);
        chart
            .configure_mesh()
            .x_label_formatter(&format_tick)
            .y_label_formatter(&format_tick)
            .label_style(TextStyle::from(font(TICK_SIZE)).color(&MUTED))
            .bold_line_style(GRID)
            .axis_style(AXIS)
            .draw()
            .map_err(e)?;

        let plot = chart.plotting_area();
        // Many overlapping bands turn grey; thin them as lines are added.
        let band_opacity =
            (BAND_OPACITY * (5.0 / panel.lines.len().max(1) as f64).min(1.0)).max(0.06);
        // Bands first, so every line and mark lies on top of every band.
        for line in &panel.lines {
            for run in band_runs(&line.points) {
                if run.len() == 1 {
                    // A lone interval is a bar, not an area.
                    let p = run[0];
                    let (low, high) = p.band.expect("band run");
                    plot.draw(&PathElement::new(
                        vec![(p.x, self.y.clamp(low)), (p.x, self.y.clamp(high))],
                        line.style.colour.mix(0.5).stroke_width(3),
                    ))
                    .map_err(e)?;
                    continue;
                }
                let mut outline: Vec<(f64, f64)> = run
                    .iter()
                    .map(|p| (p.x, self.y.clamp(p.band.expect("band run").1)))
                    .collect();
                outline.extend(
                    run.iter()
                        .rev()
                        .map(|p| (p.x, self.y.clamp(p.band.expect("band run").0))),
                );
                let fill = line.style.colour.mix(band_opacity).filled();
                plot.draw(&Polygon::new(outline, fill)).map_err(e)?;
            }
        }
        for line in &panel.lines {
            for run in value_runs(&line.points) {
                let path: Vec<(f64, f64)> = run.iter().map(|p| (p.x, self.y.clamp(p.y))).collect();
                draw_path(plot, path, line.style)?;
            }
        }
        for line in &panel.lines {
            for p in line.points.iter().flatten() {
                let at = (self.x.clamp(p.x), self.y.clamp(p.y));
                draw_marker(plot, at, line.style, MARKER_SIZE)?;
                if p.hollow {
                    let inner = LineStyle {
                        colour: WHITE,
                        ..line.style
                    };
                    draw_marker(plot, at, inner, MARKER_SIZE - 3)?;
                }
                if p.sparse {
                    plot.draw(&Circle::new(
                        at,
                        MARKER_SIZE + 5,
                        line.style.colour.stroke_width(2),
                    ))
                    .map_err(|e| DrawError(e.to_string()))?;
                }
            }
        }
        Ok(())
    }

    fn draw_legend<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        layout: &Layout,
    ) -> Result<(), DrawError> {
        let e = |e: DrawingAreaErrorKind<DB::ErrorType>| DrawError(e.to_string());
        let style = |colour: &'static RGBColor| {
            TextStyle::from(font(LEGEND_SIZE))
                .color(colour)
                .pos(Pos::new(HPos::Left, VPos::Center))
        };
        let centre_of = |item: usize| {
            let row = (item / layout.legend_columns) as i32 + 1;
            let column = (item % layout.legend_columns) as i32;
            (
                layout.legend_left + column * layout.legend_entry_width,
                layout.legend_top + row * LEGEND_ROW + LEGEND_ROW / 2,
            )
        };
        root.draw(&Text::new(
            format!("{}:", self.legend_title),
            (layout.legend_left, layout.legend_top + LEGEND_ROW / 2),
            style(&MUTED),
        ))
        .map_err(e)?;
        for (i, entry) in self.legend.iter().enumerate() {
            let (left, y) = centre_of(i);
            draw_path(
                root,
                vec![(left, y), (left + LEGEND_SWATCH, y)],
                entry.style,
            )?;
            draw_marker(
                root,
                (left + LEGEND_SWATCH / 2, y),
                entry.style,
                MARKER_SIZE,
            )?;
            root.draw(&Text::new(
                entry.label.clone(),
                (left + LEGEND_SWATCH + 12, y),
                style(&TEXT),
            ))
            .map_err(e)?;
        }
        // A figure without bands (a scatter) names none.
        if self.band_label.is_empty() {
            return Ok(());
        }
        let (left, y) = centre_of(self.legend.len());
        root.draw(&Rectangle::new(
            [(left, y - 9), (left + LEGEND_SWATCH, y + 9)],
            MUTED.mix(BAND_OPACITY * 1.6).filled(),
        ))
        .map_err(e)?;
        root.draw(&Text::new(
            self.band_label.clone(),
            (left + LEGEND_SWATCH + 12, y),
            style(&TEXT),
        ))
        .map_err(e)?;
        Ok(())
    }
}

/// Draws a line in the series' colour and dash pattern, in the area's own coordinates.
fn draw_path<DB: DrawingBackend, CT: CoordTranslate>(
    area: &DrawingArea<DB, CT>,
    path: Vec<CT::From>,
    style: LineStyle,
) -> Result<(), DrawError>
where
    CT::From: Clone,
{
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| DrawError(e.to_string());
    let stroke = style.colour.stroke_width(LINE_WIDTH);
    match style.dash {
        None => area.draw(&PathElement::new(path, stroke)).map_err(e),
        Some((dash, gap)) => area
            .draw(&DashedPathElement::new(
                path,
                dash as i32,
                gap as i32,
                stroke,
            ))
            .map_err(e),
    }
}

/// Draws one mark centred on `at` in the area's own coordinates.
fn draw_marker<DB: DrawingBackend, CT: CoordTranslate>(
    area: &DrawingArea<DB, CT>,
    at: CT::From,
    style: LineStyle,
    size: i32,
) -> Result<(), DrawError> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| DrawError(e.to_string());
    let fill = style.colour.filled();
    match style.marker {
        Marker::Circle => {
            area.draw(&(EmptyElement::at(at) + Circle::new((0, 0), size, fill)))
                .map_err(e)?;
        }
        Marker::Triangle => {
            let s = size + 2;
            let shape = vec![(0, -s), (s, s * 3 / 4), (-s, s * 3 / 4)];
            area.draw(&(EmptyElement::at(at) + Polygon::new(shape, fill)))
                .map_err(e)?;
        }
        Marker::Square => {
            let s = size - 1;
            area.draw(&(EmptyElement::at(at) + Rectangle::new([(-s, -s), (s, s)], fill)))
                .map_err(e)?;
        }
        Marker::Diamond => {
            let s = size + 2;
            let shape = vec![(0, -s), (s, 0), (0, s), (-s, 0)];
            area.draw(&(EmptyElement::at(at) + Polygon::new(shape, fill)))
                .map_err(e)?;
        }
        Marker::Cross => {
            let s = size;
            area.draw(
                &(EmptyElement::at(at)
                    + PathElement::new(vec![(-s, -s), (s, s)], style.colour.stroke_width(3))
                    + PathElement::new(vec![(-s, s), (s, -s)], style.colour.stroke_width(3))),
            )
            .map_err(e)?;
        }
    }
    Ok(())
}

/// Maximal runs of consecutive points that have a value.
fn value_runs(points: &[Option<Point>]) -> Vec<Vec<Point>> {
    runs(points, |_| true)
}

/// Maximal runs of consecutive points that have an interval.
fn band_runs(points: &[Option<Point>]) -> Vec<Vec<Point>> {
    runs(points, |p| p.band.is_some())
}

fn runs(points: &[Option<Point>], keep: impl Fn(&Point) -> bool) -> Vec<Vec<Point>> {
    let mut out = Vec::new();
    let mut current = Vec::new();
    for p in points {
        match p {
            Some(p) if keep(p) => current.push(*p),
            _ => {
                if !current.is_empty() {
                    out.push(std::mem::take(&mut current));
                }
            }
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// Encodes 8-bit RGB pixels as a PNG.
fn encode_png(pixels: &[u8], width: u32, height: u32) -> Result<Vec<u8>, DrawError> {
    let mut bytes = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut bytes, width, height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
        writer.write_image_data(pixels).map_err(|e| e.to_string())?;
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(x: f64, band: bool) -> Option<Point> {
        Some(Point {
            x,
            y: x,
            band: band.then_some((x - 0.1, x + 0.1)),
            hollow: false,
            sparse: false,
        })
    }

    #[test]
    fn gaps_break_lines_and_bands() {
        let points = vec![
            p(0.1, true),
            p(0.2, false),
            None,
            p(0.4, true),
            p(0.5, true),
        ];
        let xs = |runs: Vec<Vec<Point>>| -> Vec<Vec<f64>> {
            runs.iter()
                .map(|r| r.iter().map(|p| p.x).collect())
                .collect()
        };
        assert_eq!(
            xs(value_runs(&points)),
            vec![vec![0.1, 0.2], vec![0.4, 0.5]]
        );
        assert_eq!(xs(band_runs(&points)), vec![vec![0.1], vec![0.4, 0.5]]);
    }
}
