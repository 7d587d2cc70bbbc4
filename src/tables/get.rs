//! How a column's value is read from a row: the getters a declaration holds, and the names of
//! the histories a row's index points into. Below both the declarations and the column arrays
//! built from them.

/// The names of a run of consecutive histories, starting at index `base`.
#[derive(Debug, Clone, Copy)]
pub struct Names<'a> {
    pub base: usize,
    pub names: &'a [String],
}

impl<'a> Names<'a> {
    pub const NONE: Names<'static> = Names {
        base: 0,
        names: &[],
    };

    pub fn get(&self, history: u32) -> &'a str {
        &self.names[history as usize - self.base]
    }
}

type TextFn<G, R> = Box<dyn for<'a> Fn(&'a G, Names<'a>, &'a R) -> &'a str + Send + Sync>;
pub(super) type ValueFn<G, R, T> = Box<dyn Fn(&G, &R) -> T + Send + Sync>;

/// How a column's value is computed from a row (and the grid the row's indices point into).
pub enum Get<G, R> {
    Text(TextFn<G, R>),
    Whole(ValueFn<G, R, u64>),
    OptWhole(ValueFn<G, R, Option<u64>>),
    Real(ValueFn<G, R, f64>),
    OptReal(ValueFn<G, R, Option<f64>>),
    /// A number written as Rust displays it: a percentage such as a budget (`50`, `12.5`),
    /// or a setting such as a trigger ratio; a number in Parquet.
    Percent(ValueFn<G, R, f64>),
    /// [`Get::Percent`] where a row may have none.
    OptPercent(ValueFn<G, R, Option<f64>>),
    Flag(ValueFn<G, R, bool>),
}
