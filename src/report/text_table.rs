//! Plain-text tables for terminals: columns padded to their widest cell, words left and numbers
//! right, a dashed rule under the headings, no trailing blanks.

/// Where a column's cells sit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// The width of each column: its widest cell or heading, in chars.
pub fn widths<R: AsRef<[String]>>(headings: &[&str], rows: &[R]) -> Vec<usize> {
    let mut widths: Vec<usize> = headings.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, c) in widths.iter_mut().zip(row.as_ref()) {
            *w = (*w).max(c.chars().count());
        }
    }
    widths
}

/// One line of the table, ending in a newline.
pub fn line<S: AsRef<str>>(cells: &[S], widths: &[usize], align: &[Align]) -> String {
    painted_line(cells, widths, align, |_, cell| cell)
}

/// One line of the table with `paint` applied to each cell once padded (its column, the padded
/// text): colour on a terminal, whose codes must not count in a width. A last column aligned
/// left is not padded, so a painted one carries no blanks before the line's end.
pub fn painted_line<S: AsRef<str>>(
    cells: &[S],
    widths: &[usize],
    align: &[Align],
    paint: impl Fn(usize, String) -> String,
) -> String {
    let mut s = String::new();
    let last = cells.len().min(widths.len()).saturating_sub(1);
    for (i, (c, &w)) in cells.iter().zip(widths).enumerate() {
        let side = align.get(i).copied().unwrap_or(Align::Right);
        let w = if i == last && side == Align::Left {
            0
        } else {
            w
        };
        s += &paint(i, pad(c.as_ref(), w, side));
        s.push_str("  ");
    }
    s.trim_end().to_string() + "\n"
}

/// `text` padded with blanks to `width` chars, on the side `align` says. Padded by hand, not
/// by `format!`'s width, which panics past 65 535 (a cell can be a whole transcript line).
pub fn pad(text: &str, width: usize, align: Align) -> String {
    let blanks = std::iter::repeat_n(' ', width.saturating_sub(text.chars().count()));
    match align {
        Align::Left => text.chars().chain(blanks).collect(),
        Align::Right => blanks.chain(text.chars()).collect(),
    }
}

/// The heading line and the dashed rule under it.
pub fn head(headings: &[&str], widths: &[usize], align: &[Align]) -> String {
    let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
    line(headings, widths, align) + &line(&rule, widths, align)
}

/// A whole table: headings, rule, rows.
pub fn render<R: AsRef<[String]>>(headings: &[&str], rows: &[R], align: &[Align]) -> String {
    let widths = widths(headings, rows);
    let mut out = head(headings, &widths, align);
    for r in rows {
        out += &line(r.as_ref(), &widths, align);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pads_words_left_and_numbers_right() {
        let rows = vec![
            vec!["recent".to_string(), "171".to_string()],
            vec!["required(fill=skip)".to_string(), "9".to_string()],
        ];
        let t = render(&["strategy", "used"], &rows, &[Align::Left, Align::Right]);
        assert_eq!(
            t,
            "strategy             used\n-------------------  ----\nrecent                171\nrequired(fill=skip)     9\n"
        );
    }

    #[test]
    fn painted_cells_are_padded_before_their_codes() {
        let widths = [6, 3];
        let bold = |_: usize, c: String| format!("<{c}>");
        assert_eq!(
            painted_line(&["ab", "c"], &widths, &[Align::Left, Align::Left], bold),
            "<ab    >  <c>\n"
        );
        assert_eq!(
            painted_line(&["ab", "c"], &widths, &[Align::Right, Align::Right], bold),
            "<    ab>  <  c>\n"
        );
        // Unpainted, a last column left unpadded is the padded one trimmed.
        let left = [Align::Left, Align::Left];
        assert_eq!(line(&["ab", "c"], &widths, &left), "ab      c\n");
        assert_eq!(line(&["ab", ""], &widths, &left), "ab\n");
    }

    #[test]
    fn cells_wider_than_a_format_width_are_padded_without_panic() {
        // `format!("{:<w$}")` panics for w > 65 535; a 70 000-char tool name must not.
        let wide = "t".repeat(70_000);
        assert_eq!(pad("ab", 4, Align::Left), "ab  ");
        assert_eq!(pad("ab", 4, Align::Right), "  ab");
        assert_eq!(pad(&wide, 70_002, Align::Left).chars().count(), 70_002);
        let t = render(
            &["x", "y"],
            &[vec![wide.clone(), "1".into()]],
            &[Align::Left, Align::Right],
        );
        assert_eq!(t.lines().nth(2).unwrap(), format!("{wide}  1"));
    }
}
