//! The renderers' integration tests, one executable (one link, not three): `golden`, every
//! renderer against recorded runs byte for byte; `calls`, a recorded ladder of voice calls
//! told as a voice team reads it; `words`, counts that agree with their nouns.

mod calls;
mod golden;
mod words;
