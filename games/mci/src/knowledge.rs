//! Static knowledge handed to the agent (manual pages at K2, model components at K4): a text
//! for a language model and the same facts as named numbers for a symbolic operator.

/// One manual page or model component.
#[derive(Clone, Debug, PartialEq)]
pub struct Doc {
    /// The page as prose.
    pub text: String,
    /// Its facts as `(name, value)` pairs, in a fixed order.
    pub entries: Vec<(String, f64)>,
}

impl Doc {
    /// A page with this text and no entries yet.
    pub fn text(text: &str) -> Doc {
        Doc {
            text: text.to_owned(),
            entries: Vec::new(),
        }
    }

    /// Adds the fact `name = value`.
    pub fn with(mut self, name: &str, value: f64) -> Doc {
        self.entries.push((name.to_owned(), value));
        self
    }
}
