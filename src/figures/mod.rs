//! What every chart is drawn with: a figure of small multiples described as data and its
//! layout, the one embedded font, the labels of numbers and the palette. Below the sweep, whose
//! estimate bounds a chart's memory from the figure's layout, and the report, which draws.

pub(crate) mod figure;
pub(crate) mod fonts;
pub(crate) mod labels;
pub(crate) mod palette;
