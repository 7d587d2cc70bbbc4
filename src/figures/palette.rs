//! Colours and marks that stay distinct for readers with colour-vision deficiencies and in
//! greyscale print: the Okabe–Ito palette for strategies, plus a marker and a dash pattern
//! per keep_recent value so lines differ by more than hue.

use plotters::style::RGBColor;

/// Okabe & Ito (2008), "Color Universal Design". Yellow comes last: it is faint on white.
/// Reference lines (no difference): a neutral grey, apart from every strategy's colour.
pub const NEUTRAL: RGBColor = RGBColor(0x88, 0x88, 0x88);

pub const OKABE_ITO: [RGBColor; 8] = [
    RGBColor(0x00, 0x72, 0xB2), // blue
    RGBColor(0xD5, 0x5E, 0x00), // vermillion
    RGBColor(0x00, 0x9E, 0x73), // bluish green
    RGBColor(0xCC, 0x79, 0xA7), // reddish purple
    RGBColor(0xE6, 0x9F, 0x00), // orange
    RGBColor(0x56, 0xB4, 0xE9), // sky blue
    RGBColor(0x00, 0x00, 0x00), // black
    RGBColor(0xF0, 0xE4, 0x42), // yellow
];

/// The colour of the `i`-th strategy. Past eight the colours repeat; [`marker`] then differs.
pub fn colour(i: usize) -> RGBColor {
    OKABE_ITO[i % OKABE_ITO.len()]
}

/// Point marks, distinct in outline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    Circle,
    Triangle,
    Square,
    Diamond,
    Cross,
}

const MARKERS: [Marker; 5] = [
    Marker::Circle,
    Marker::Triangle,
    Marker::Square,
    Marker::Diamond,
    Marker::Cross,
];

/// The marker of a series: by keep_recent position, shifted for strategies whose colour
/// repeats (the ninth strategy onwards) so no two series look alike.
pub fn marker(strategy_index: usize, keep_recent_index: usize) -> Marker {
    let cycle = strategy_index / OKABE_ITO.len();
    MARKERS[(keep_recent_index + cycle) % MARKERS.len()]
}

/// The marker of the `i`-th strategy where each strategy is one series: with [`colour`], a
/// pair no other of the first 40 strategies shares (8 colours, 5 markers, coprime).
pub fn strategy_marker(i: usize) -> Marker {
    MARKERS[i % MARKERS.len()]
}

/// A line's dash pattern: `None` is solid, `Some((dash, gap))` in pixels.
pub fn dash(keep_recent_index: usize) -> Option<(u32, u32)> {
    match keep_recent_index % 3 {
        0 => None,
        1 => Some((14, 7)),
        _ => Some((4, 5)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_differ_by_more_than_colour() {
        assert_eq!(colour(0), RGBColor(0x00, 0x72, 0xB2));
        assert_eq!(colour(8), colour(0));
        assert_ne!(marker(8, 0), marker(0, 0));
        assert_ne!(marker(0, 1), marker(0, 0));
        assert_eq!(dash(0), None);
        assert!(dash(1).is_some());
        let pairs: std::collections::BTreeSet<(usize, usize)> = (0..40)
            .map(|i| (i % 8, strategy_marker(i) as usize))
            .collect();
        assert_eq!(pairs.len(), 40);
    }
}
