//! A wall made from its fact, and what a closer reading adds to it. Its words are made
//! where it is shown or written (`words::wall`, `words::json`), never stored.

use result::ladder::Wall;
use result::wall::{WallAlso, WallFact};
use result::WallKind;

/// The wall `fact` read, from a level.
pub fn of(kind: WallKind, from: Option<f64>, fact: WallFact) -> Wall {
    Wall {
        kind,
        from,
        fact: Some(fact),
        ..Wall::default()
    }
}

/// The wall with `also` said after it.
pub fn add(mut w: Wall, also: WallAlso) -> Wall {
    w.also.push(also);
    w
}
