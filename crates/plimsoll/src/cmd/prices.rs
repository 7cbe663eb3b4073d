//! `plimsoll prices`: prints the price table Plimsoll ships (dated), to copy, edit and
//! name in plimsoll.toml's `[cost] prices`.

/// Prints the shipped table on stdout.
pub fn run() -> anyhow::Result<u8> {
    print!("{}", experiment::prices::DEFAULT);
    Ok(0)
}
