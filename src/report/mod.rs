//! Turning metrics into things people read: tables, charts and reports.

pub mod charts;
pub mod figure;
pub mod fonts;
pub mod inspect;
pub mod labels;
pub mod manifest;
pub mod markdown;
pub mod numbers;
pub mod palette;
pub mod publish;
pub mod session;
pub mod session_charts;
pub mod summary_grid;
pub mod summary_table;
pub mod table;
pub mod text_table;

pub use charts::render_all;
