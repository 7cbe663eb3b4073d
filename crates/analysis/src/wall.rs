//! A wall made from its fact, and what a closer reading adds to it: the one place a wall's
//! words (`Wall.text`, `Wall.short`, for readers of the JSON) are written beside it, by
//! `words::wall`.

use result::ladder::Wall;
use result::wall::{WallAlso, WallFact};
use result::WallKind;

/// The wall `fact` read, from a level.
pub fn of(kind: WallKind, from: Option<f64>, fact: WallFact) -> Wall {
    said(Wall {
        kind,
        from,
        fact: Some(fact),
        ..Wall::default()
    })
}

/// The wall with `also` said after it.
pub fn add(mut w: Wall, also: WallAlso) -> Wall {
    w.also.push(also);
    said(w)
}

/// The wall with its words written from its fact.
fn said(mut w: Wall) -> Wall {
    w.text = words::wall::text(&w);
    w.short = words::wall::short(&w);
    w
}
