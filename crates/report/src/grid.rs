//! A table as its cells — a head, each column's alignment and width, rows — written as
//! Markdown (report.md, the terminal's tables) and as HTML (report.html) from the same
//! cells: neither is read back out of the other, so a cell may hold a `|`.

use crate::svg::esc;
use std::fmt::Write;

/// Where a column's cells sit, as Markdown's rule under the head says it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Align {
    /// No alignment said (`---`).
    Plain,
    Left,
    Right,
}

/// How wide a column is written in Markdown.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Width {
    /// Cells as they are; the rule as wide as the head (`|---------:|` under `sessions`).
    Head,
    /// Cells as they are; a rule this many characters wide (`|--:|` is 3).
    Rule(usize),
    /// Every cell padded to this many characters, for a terminal's columns.
    Fixed(usize),
}

/// One column: its name in the head, its alignment and its width.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Col {
    pub name: &'static str,
    pub align: Align,
    pub width: Width,
}

impl Col {
    pub const fn left(name: &'static str) -> Col {
        Col {
            name,
            align: Align::Left,
            width: Width::Head,
        }
    }

    pub const fn right(name: &'static str) -> Col {
        Col {
            name,
            align: Align::Right,
            width: Width::Head,
        }
    }

    pub const fn plain(name: &'static str) -> Col {
        Col {
            name,
            align: Align::Plain,
            width: Width::Rule(3),
        }
    }

    /// The same column with a rule of three (`--:`).
    pub const fn short(self) -> Col {
        self.rule(3)
    }

    /// The same column with a rule `n` characters wide, its cells as they are.
    pub const fn rule(self, n: usize) -> Col {
        Col {
            width: Width::Rule(n),
            ..self
        }
    }

    /// The same column padded to `w` characters.
    pub const fn fixed(self, w: usize) -> Col {
        Col {
            width: Width::Fixed(w),
            ..self
        }
    }

    /// Markdown's rule under this column's name.
    fn rule_text(&self) -> String {
        let n = match self.width {
            Width::Head => self.name.chars().count() + 2,
            Width::Rule(n) => n,
            Width::Fixed(w) => w + 2,
        };
        match self.align {
            Align::Plain => "-".repeat(n),
            Align::Left => format!(":{}", "-".repeat(n - 1)),
            Align::Right => format!("{}:", "-".repeat(n - 1)),
        }
    }

    /// A cell of this column as Markdown writes it, with its spaces.
    fn cell(&self, text: &str, head: bool) -> String {
        match (self.width, self.align, head) {
            (Width::Fixed(w), Align::Right, false) => format!(" {text:>w$} "),
            (Width::Fixed(w), ..) => format!(" {text:<w$} "),
            _ => format!(" {text} "),
        }
    }
}

/// A cell: its text, and whether Markdown marks it strong (HTML shows the text plain).
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    pub text: String,
    pub strong: bool,
}

impl From<String> for Cell {
    fn from(text: String) -> Cell {
        Cell {
            text,
            strong: false,
        }
    }
}

impl From<&str> for Cell {
    fn from(text: &str) -> Cell {
        Cell::from(text.to_string())
    }
}

/// A cell Markdown writes as `**text**`.
pub fn strong(text: impl Into<String>) -> Cell {
    Cell {
        text: text.into(),
        strong: true,
    }
}

/// A table: its columns and its rows, each row with a class for HTML (a step's standing).
#[derive(Clone, Debug, PartialEq)]
pub struct Grid {
    cols: Vec<Col>,
    rows: Vec<(Option<&'static str>, Vec<Cell>)>,
}

impl Grid {
    pub fn new(cols: &[Col]) -> Grid {
        Grid {
            cols: cols.to_vec(),
            rows: Vec::new(),
        }
    }

    /// A row of cells, one a column (a row short of cells is written with its last
    /// columns empty, never shifted).
    pub fn row(&mut self, cells: Vec<Cell>) {
        self.rows.push((None, cells));
    }

    /// A row whose HTML `<tr>` has a class.
    pub fn row_classed(&mut self, class: &'static str, cells: Vec<Cell>) {
        self.rows.push((Some(class), cells));
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The head and its rule, each line without its newline.
    pub fn head(&self) -> String {
        let names: Vec<Cell> = self.cols.iter().map(|c| Cell::from(c.name)).collect();
        let rule: String = self
            .cols
            .iter()
            .map(|c| format!("{}|", c.rule_text()))
            .collect();
        format!("{}\n|{rule}", self.line(&names, true))
    }

    /// One row as Markdown writes it.
    fn line(&self, cells: &[Cell], head: bool) -> String {
        debug_assert_eq!(cells.len(), self.cols.len(), "a row's cells, one a column");
        let empty = Cell::from("");
        let cells = cells.iter().chain(std::iter::repeat(&empty));
        let mut s = String::from("|");
        for (c, cell) in self.cols.iter().zip(cells) {
            let text = cell.text.replace('|', "\\|");
            let text = match cell.strong {
                true => format!("**{text}**"),
                false => text,
            };
            s.push_str(&c.cell(&text, head));
            s.push('|');
        }
        s
    }

    /// The row at `i` as Markdown writes it (a terminal prints it as a step finishes).
    pub fn line_at(&self, i: usize) -> String {
        self.rows
            .get(i)
            .map_or(String::new(), |(_, cells)| self.line(cells, false))
    }

    /// The whole table in Markdown, each line ending in a newline.
    pub fn markdown(&self) -> String {
        let mut s = self.head();
        s.push('\n');
        for (_, cells) in &self.rows {
            s.push_str(&self.line(cells, false));
            s.push('\n');
        }
        s
    }

    /// The whole table in HTML, every cell escaped.
    pub fn html(&self) -> String {
        let mut t = String::from("<table><tr>");
        for c in &self.cols {
            let _ = write!(t, "<th>{}</th>", esc(c.name));
        }
        t.push_str("</tr>");
        for (class, cells) in &self.rows {
            match class {
                Some(c) => {
                    let _ = write!(t, r#"<tr class="{c}">"#);
                }
                None => t.push_str("<tr>"),
            }
            for cell in cells {
                let _ = write!(t, "<td>{}</td>", esc(cell.text.trim()));
            }
            t.push_str("</tr>");
        }
        t.push_str("</table>");
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_grid_writes_markdown_padded_columns_and_html_from_the_same_cells() {
        let mut g = Grid::new(&[
            Col::right("sessions").fixed(8),
            Col::left("outcome").fixed(9),
            Col::right("ok"),
            Col::left("note").short(),
        ]);
        g.row_classed(
            "holds",
            vec!["4".into(), "ok".into(), "12".into(), strong("a | b")],
        );
        g.row(vec![
            "8".into(),
            "collapsed".into(),
            "0".into(),
            "<x> | y".into(),
        ]);
        assert_eq!(
            g.markdown(),
            "| sessions | outcome   | ok | note |\n|---------:|:----------|---:|:--|\n|        4 | ok        | 12 | **a \\| b** |\n|        8 | collapsed | 0 | <x> \\| y |\n"
        );
        assert_eq!(g.line_at(0), "|        4 | ok        | 12 | **a \\| b** |");
        assert_eq!(
            g.html(),
            r#"<table><tr><th>sessions</th><th>outcome</th><th>ok</th><th>note</th></tr><tr class="holds"><td>4</td><td>ok</td><td>12</td><td>a | b</td></tr><tr><td>8</td><td>collapsed</td><td>0</td><td>&lt;x&gt; | y</td></tr></table>"#
        );
        assert_eq!(Col::plain("point").rule_text(), "---");
        assert_eq!(Col::right("sessions").rule(4).rule_text(), "---:");
    }
}
