//! Applying a patch to a harness: byte-range edits and whole-layer or whole-file replacements,
//! overlaps refused, every changed file formatted.
//!
//! A patch is data (one JSON schema, [`Patch`]), so a repairer, a model or a person can write
//! one and `harness patch` applies it the same way. Offsets are bytes of the file as it is
//! before the patch; all edits of one patch refer to that one version, which is why two edits
//! that overlap, or insert at the same offset, are refused rather than ordered.

use serde::{Deserialize, Serialize};

use crate::load::Sources;

/// Replace `start..end` of `file` with `text`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edit {
    /// The file, by path as loaded.
    pub file: String,
    /// The first byte replaced.
    pub start: usize,
    /// One past the last byte replaced (`start` for an insertion).
    pub end: usize,
    /// The replacement.
    pub text: String,
}

/// Replace the whole declaration of a layer (its `layer ... { ... }` item) with `text`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayerReplacement {
    /// The file that declares the layer.
    pub file: String,
    /// The layer's name.
    pub layer: String,
    /// The new declaration.
    pub text: String,
}

/// Replace a whole file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileReplacement {
    /// The file.
    pub file: String,
    /// Its new text.
    pub text: String,
}

/// A set of changes to a harness's files, all against one version of them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Patch {
    /// Byte-range edits.
    #[serde(default)]
    pub edits: Vec<Edit>,
    /// Whole-layer replacements.
    #[serde(default)]
    pub layers: Vec<LayerReplacement>,
    /// Whole-file replacements.
    #[serde(default)]
    pub files: Vec<FileReplacement>,
}

impl Patch {
    /// Whether the patch changes nothing.
    pub fn is_empty(&self) -> bool {
        self.edits.is_empty() && self.layers.is_empty() && self.files.is_empty()
    }
}

/// The result of applying a patch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Applied {
    /// The patched sources.
    pub sources: Sources,
    /// The files that changed, sorted.
    pub changed: Vec<String>,
    /// Changed files that do not parse, left as patched and not formatted.
    pub unformatted: Vec<String>,
}

/// Applies `patch` to `sources`: every edit and replacement at once, then formats each changed
/// file. Fails, changing nothing, when an edit names an unknown file or layer, lies outside its
/// file or off a character boundary, or overlaps another edit of the same file.
pub fn apply(sources: &Sources, patch: &Patch) -> Result<Applied, String> {
    let mut edits = patch.edits.clone();
    for replacement in &patch.layers {
        let text = file_text(sources, &replacement.file)?;
        let parse = harness_grammar::parse(text);
        let span = parse
            .file
            .items
            .iter()
            .find_map(|item| match item {
                harness_grammar::ast::Item::Layer(layer)
                    if layer.name.name == replacement.layer =>
                {
                    Some(layer.span)
                }
                _ => None,
            })
            .ok_or_else(|| {
                format!(
                    "{} declares no layer `{}`",
                    replacement.file, replacement.layer
                )
            })?;
        // The layer's span starts at `layer`; its doc comments stay.
        edits.push(Edit {
            file: replacement.file.clone(),
            start: span.start as usize,
            end: span.end as usize,
            text: replacement.text.trim_end().to_string(),
        });
    }
    let mut files = sources.files.clone();
    let mut changed = Vec::new();
    for replacement in &patch.files {
        file_text(sources, &replacement.file)?;
        if edits.iter().any(|e| e.file == replacement.file) {
            return Err(format!(
                "{} is both replaced and edited; a patch does one or the other",
                replacement.file
            ));
        }
        if let Some((_, text)) = files.iter_mut().find(|(p, _)| *p == replacement.file) {
            *text = replacement.text.clone();
        }
        changed.push(replacement.file.clone());
    }
    edits.sort_by(|a, b| (&a.file, a.start, a.end).cmp(&(&b.file, b.start, b.end)));
    for pair in edits.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        if a.file == b.file && (b.start < a.end || b.start == a.start) {
            return Err(format!(
                "edits {}..{} and {}..{} of {} overlap; a patch's edits must not overlap",
                a.start, a.end, b.start, b.end, a.file
            ));
        }
    }
    for edit in &edits {
        let text = file_text(sources, &edit.file)?;
        if edit.start > edit.end
            || edit.end > text.len()
            || !text.is_char_boundary(edit.start)
            || !text.is_char_boundary(edit.end)
        {
            return Err(format!(
                "edit {}..{} does not lie on character boundaries within {} ({} bytes)",
                edit.start,
                edit.end,
                edit.file,
                text.len()
            ));
        }
    }
    // From the end of each file, so the earlier offsets stay valid.
    for edit in edits.iter().rev() {
        if let Some((_, text)) = files.iter_mut().find(|(p, _)| *p == edit.file) {
            text.replace_range(edit.start..edit.end, &edit.text);
        }
        changed.push(edit.file.clone());
    }
    changed.sort();
    changed.dedup();
    let mut unformatted = Vec::new();
    for (path, text) in &mut files {
        if !changed.contains(path) {
            continue;
        }
        match harness_grammar::format::format(text) {
            Ok(formatted) => *text = formatted,
            Err(_) => unformatted.push(path.clone()),
        }
    }
    Ok(Applied {
        sources: Sources {
            name: sources.name.clone(),
            files,
        },
        changed,
        unformatted,
    })
}

fn file_text<'a>(sources: &'a Sources, path: &str) -> Result<&'a str, String> {
    sources.text(path).ok_or_else(|| {
        format!(
            "the patch names {path}, which is not a file of the harness ({})",
            sources
                .files
                .iter()
                .map(|(p, _)| p.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}
