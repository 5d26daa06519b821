//! Questions: the 83-template catalogue and the QuestionSpec region language.

use std::fmt;
use std::sync::OnceLock;

use serde_json::Value;

use crate::cell::{Cell, cells_of, neighbours4};
use crate::kernels::{frontier, hit_clusters};

/// Question families. The first six are the catalogue's; the last two are synthesized only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    /// One row (8 cells).
    Row,
    /// One column (8 cells).
    Column,
    /// One 4×4 quadrant.
    Quadrant,
    /// Two adjacent rows.
    RowBand2,
    /// Two adjacent columns.
    ColumnBand2,
    /// A 2×2 block.
    Block2x2,
    /// Unknown cells around a hit or frontier anchor (synthesized).
    FrontierRing,
    /// Unknown cells around a hit cluster (synthesized).
    ClusterNeighborhood,
}

impl Family {
    /// The family's id prefix, e.g. `row-band-2`.
    pub const fn name(self) -> &'static str {
        match self {
            Family::Row => "row",
            Family::Column => "column",
            Family::Quadrant => "quadrant",
            Family::RowBand2 => "row-band-2",
            Family::ColumnBand2 => "column-band-2",
            Family::Block2x2 => "block-2x2",
            Family::FrontierRing => "frontier-ring",
            Family::ClusterNeighborhood => "cluster-neighborhood",
        }
    }

    /// The budget grouping: rows, columns and quadrants are coarse, everything else local.
    pub const fn group(self) -> Group {
        match self {
            Family::Row | Family::Column | Family::Quadrant => Group::Coarse,
            _ => Group::Local,
        }
    }
}

/// The two family groupings of §4.2.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Group {
    /// Rows, columns, quadrants (20 templates).
    Coarse,
    /// Bands and 2×2 blocks (63 templates), and synthesized regions.
    Local,
}

/// A yes/no question "is there at least one ship cell in `region`?" (hit cells included).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Question {
    /// Dedup key, e.g. `row:A` or `frontier-ring:E6:r1`.
    pub id: String,
    /// The text put to the spotter.
    pub text: String,
    /// Its family.
    pub family: Family,
    /// The cells asked about.
    pub region: u64,
}

impl Question {
    /// True answer on a board whose ship cells are `union`.
    pub fn evaluate(&self, union: u64) -> bool {
        union & self.region != 0
    }
}

/// Number of catalogue templates.
pub const CATALOGUE_LEN: usize = 83;

const QUADRANTS: [(&str, usize, usize); 4] = [
    ("top-left", 0, 0),
    ("top-right", 0, 4),
    ("bottom-left", 4, 0),
    ("bottom-right", 4, 4),
];

fn rect(row: usize, col: usize, rows: usize, cols: usize) -> u64 {
    let mut m = 0;
    for r in row..row + rows {
        for c in col..col + cols {
            m |= 1u64 << (r * 8 + c);
        }
    }
    m
}

fn row_letter(r: usize) -> char {
    (b'A' + r as u8) as char
}

fn template(family: Family, key: String, text: String, region: u64) -> Question {
    Question {
        id: format!("{}:{key}", family.name()),
        text,
        family,
        region,
    }
}

fn row_q(r: usize) -> Question {
    let l = row_letter(r);
    template(
        Family::Row,
        l.to_string(),
        format!("Is there a ship in row {l}?"),
        rect(r, 0, 1, 8),
    )
}

fn column_q(c: usize) -> Question {
    let n = c + 1;
    template(
        Family::Column,
        n.to_string(),
        format!("Is there a ship in column {n}?"),
        rect(0, c, 8, 1),
    )
}

fn quadrant_q(name: &str, r: usize, c: usize) -> Question {
    let text = format!("Is there a ship in the {name} quadrant?");
    template(Family::Quadrant, name.to_string(), text, rect(r, c, 4, 4))
}

fn row_band_q(r: usize) -> Question {
    let key = format!("{}-{}", row_letter(r), row_letter(r + 1));
    let text = format!("Is there a ship in rows {key}?");
    template(Family::RowBand2, key, text, rect(r, 0, 2, 8))
}

fn column_band_q(c: usize) -> Question {
    let key = format!("{}-{}", c + 1, c + 2);
    let text = format!("Is there a ship in columns {key}?");
    template(Family::ColumnBand2, key, text, rect(0, c, 8, 2))
}

fn block_q(r: usize, c: usize) -> Question {
    let key = format!("{}{}-{}{}", row_letter(r), c + 1, row_letter(r + 1), c + 2);
    let text = format!("Is there a ship in block {key}?");
    template(Family::Block2x2, key, text, rect(r, c, 2, 2))
}

/// The 83 templates in the reference's order: rows A–H, columns 1–8, quadrants (top-left,
/// top-right, bottom-left, bottom-right), row bands A-B..G-H, column bands 1-2..7-8, then the
/// 49 blocks A1-B2..G7-H8 in row-major order of their top-left anchor.
pub fn catalogue() -> &'static [Question] {
    static CATALOGUE: OnceLock<Vec<Question>> = OnceLock::new();
    CATALOGUE.get_or_init(|| {
        let mut q = Vec::with_capacity(CATALOGUE_LEN);
        q.extend((0..8).map(row_q));
        q.extend((0..8).map(column_q));
        q.extend(QUADRANTS.iter().map(|&(n, r, c)| quadrant_q(n, r, c)));
        q.extend((0..7).map(row_band_q));
        q.extend((0..7).map(column_band_q));
        q.extend((0..7).flat_map(|r| (0..7).map(move |c| block_q(r, c))));
        q
    })
}

/// Position of a template id in the catalogue.
pub fn template_index(id: &str) -> Option<usize> {
    catalogue().iter().position(|q| q.id == id)
}

/// Lower-cases and collapses whitespace: the reference's normalized-text dedup key.
pub fn normalize_text(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// True when `question` matches any entry of `asked` (ids or texts) by id, text or normalized
/// text.
pub fn is_asked<'a>(question: &Question, asked: impl IntoIterator<Item = &'a str>) -> bool {
    let norm = normalize_text(&question.text);
    asked
        .into_iter()
        .any(|a| a == question.id || a == question.text || normalize_text(a) == norm)
}

/// The seven typed compile errors of the QuestionSpec language.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpecError {
    /// Not JSON, not an object, or no `region` object.
    InvalidSpec(String),
    /// The predicate is not `exists_ship`.
    UnsupportedPredicate(String),
    /// Unknown region kind, or a missing or mistyped field.
    InvalidRegion(String),
    /// A row, column, anchor, radius or depth outside its range.
    OutOfRange(String),
    /// The anchor is not a hit or frontier cell (ring) or not in a hit cluster (neighbourhood).
    UnknownAnchor(String),
    /// The compiled region has no cells.
    EmptyRegion,
    /// A question with this id or text was already asked.
    DuplicateQuestion(String),
}

impl SpecError {
    /// The reference's error code, e.g. `OUT_OF_RANGE`.
    pub const fn code(&self) -> &'static str {
        match self {
            Self::InvalidSpec(_) => "INVALID_SPEC",
            Self::UnsupportedPredicate(_) => "UNSUPPORTED_PREDICATE",
            Self::InvalidRegion(_) => "INVALID_REGION",
            Self::OutOfRange(_) => "OUT_OF_RANGE",
            Self::UnknownAnchor(_) => "UNKNOWN_ANCHOR",
            Self::EmptyRegion => "EMPTY_REGION",
            Self::DuplicateQuestion(_) => "DUPLICATE_QUESTION",
        }
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let code = self.code();
        match self {
            Self::EmptyRegion => write!(f, "{code}: the region has no cells"),
            Self::InvalidSpec(m)
            | Self::UnsupportedPredicate(m)
            | Self::InvalidRegion(m)
            | Self::OutOfRange(m)
            | Self::UnknownAnchor(m)
            | Self::DuplicateQuestion(m) => write!(f, "{code}: {m}"),
        }
    }
}

impl std::error::Error for SpecError {}

/// A parsed (not yet compiled) region of the QuestionSpec language.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegionSpec {
    /// `{"kind":"row","row":"A"}`.
    Row(usize),
    /// `{"kind":"column","column":1}`.
    Column(usize),
    /// `{"kind":"quadrant","quadrant":"top-left"}`.
    Quadrant(usize),
    /// `{"kind":"row_band_2","startRow":"A"}` (A–G).
    RowBand2(usize),
    /// `{"kind":"column_band_2","startColumn":1}` (1–7).
    ColumnBand2(usize),
    /// `{"kind":"block_2x2","anchor":"A1"}` (top-left, not in row H or column 8).
    Block2x2(Cell),
    /// `{"kind":"frontier_ring","anchor":"E6","radius":1}` (radius 1 or 2, default 1).
    FrontierRing {
        /// A hit or frontier cell.
        anchor: Cell,
        /// Manhattan radius.
        radius: usize,
    },
    /// `{"kind":"cluster_neighborhood","anchor":"E6","depth":1}` (depth 1 or 2, default 1).
    ClusterNeighborhood {
        /// A cell of a hit cluster.
        anchor: Cell,
        /// Manhattan depth around the cluster.
        depth: usize,
    },
}

/// What a captain can see when a spec is compiled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VisibleState {
    /// Hit cells.
    pub hits: u64,
    /// Missed cells.
    pub misses: u64,
}

impl VisibleState {
    fn unknown(&self) -> u64 {
        !(self.hits | self.misses)
    }
}

fn field<'a>(region: &'a Value, name: &str) -> Result<&'a Value, SpecError> {
    region
        .get(name)
        .ok_or_else(|| SpecError::InvalidRegion(format!("missing field `{name}`")))
}

fn row_field(region: &Value, name: &str, last: usize) -> Result<usize, SpecError> {
    let v = field(region, name)?;
    let s = v
        .as_str()
        .ok_or_else(|| SpecError::InvalidRegion(format!("`{name}` must be a row letter")))?;
    let mut chars = s.chars();
    match (chars.next().map(|c| c.to_ascii_uppercase()), chars.next()) {
        (Some(c @ 'A'..='Z'), None) if (c as usize - 'A' as usize) <= last => {
            Ok(c as usize - 'A' as usize)
        }
        _ => Err(SpecError::OutOfRange(format!("`{name}` = {s:?}"))),
    }
}

fn column_field(region: &Value, name: &str, last: usize) -> Result<usize, SpecError> {
    let v = field(region, name)?;
    let n = match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse::<i64>().ok(),
        _ => None,
    }
    .ok_or_else(|| SpecError::InvalidRegion(format!("`{name}` must be a column number")))?;
    if (1..=last as i64 + 1).contains(&n) {
        Ok(n as usize - 1)
    } else {
        Err(SpecError::OutOfRange(format!("`{name}` = {n}")))
    }
}

fn cell_field(region: &Value, name: &str) -> Result<Cell, SpecError> {
    let s = field(region, name)?
        .as_str()
        .ok_or_else(|| SpecError::InvalidRegion(format!("`{name}` must be a cell id")))?;
    s.parse::<Cell>()
        .map_err(|e| SpecError::OutOfRange(e.to_string()))
}

fn small_field(region: &Value, name: &str) -> Result<usize, SpecError> {
    match region.get(name) {
        None | Some(Value::Null) => Ok(1),
        Some(v) => match v.as_i64() {
            Some(n @ (1 | 2)) => Ok(n as usize),
            Some(n) => Err(SpecError::OutOfRange(format!(
                "`{name}` = {n} (must be 1 or 2)"
            ))),
            None => Err(SpecError::InvalidRegion(format!("`{name}` must be 1 or 2"))),
        },
    }
}

impl RegionSpec {
    /// Parses the JSON form `{"predicate":"exists_ship","region":{"kind":…}}`.
    pub fn parse_json(text: &str) -> Result<Self, SpecError> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| SpecError::InvalidSpec(e.to_string()))?;
        Self::from_value(&value)
    }

    /// Parses an already decoded JSON value (same form as [`RegionSpec::parse_json`]).
    pub fn from_value(value: &Value) -> Result<Self, SpecError> {
        let obj = value
            .as_object()
            .ok_or_else(|| SpecError::InvalidSpec("a spec must be a JSON object".into()))?;
        match obj.get("predicate") {
            Some(Value::String(p)) if p == "exists_ship" => {}
            Some(Value::String(p)) => return Err(SpecError::UnsupportedPredicate(p.clone())),
            Some(other) => return Err(SpecError::UnsupportedPredicate(other.to_string())),
            None => return Err(SpecError::InvalidSpec("missing `predicate`".into())),
        }
        let region = obj
            .get("region")
            .filter(|r| r.is_object())
            .ok_or_else(|| SpecError::InvalidSpec("missing `region` object".into()))?;
        let kind = field(region, "kind")?
            .as_str()
            .ok_or_else(|| SpecError::InvalidRegion("`kind` must be a string".into()))?;
        Ok(match kind {
            "row" => RegionSpec::Row(row_field(region, "row", 7)?),
            "column" => RegionSpec::Column(column_field(region, "column", 7)?),
            "quadrant" => {
                let name = field(region, "quadrant")?.as_str().unwrap_or_default();
                let q = QUADRANTS.iter().position(|(n, _, _)| *n == name);
                RegionSpec::Quadrant(
                    q.ok_or_else(|| SpecError::OutOfRange(format!("quadrant {name:?}")))?,
                )
            }
            "row_band_2" => RegionSpec::RowBand2(row_field(region, "startRow", 6)?),
            "column_band_2" => RegionSpec::ColumnBand2(column_field(region, "startColumn", 6)?),
            "block_2x2" => {
                let anchor = cell_field(region, "anchor")?;
                if anchor.row() == 7 || anchor.col() == 7 {
                    return Err(SpecError::OutOfRange(format!("block anchor {anchor}")));
                }
                RegionSpec::Block2x2(anchor)
            }
            "frontier_ring" => RegionSpec::FrontierRing {
                anchor: cell_field(region, "anchor")?,
                radius: small_field(region, "radius")?,
            },
            "cluster_neighborhood" => RegionSpec::ClusterNeighborhood {
                anchor: cell_field(region, "anchor")?,
                depth: small_field(region, "depth")?,
            },
            other => return Err(SpecError::InvalidRegion(format!("unknown kind {other:?}"))),
        })
    }

    /// Compiles the region against the visible state into a question with a fixed region.
    /// `asked` lists the ids or texts already asked; a repeat is `DUPLICATE_QUESTION`.
    pub fn compile<'a>(
        &self,
        state: &VisibleState,
        asked: impl IntoIterator<Item = &'a str>,
    ) -> Result<Question, SpecError> {
        let question = match *self {
            RegionSpec::Row(r) => row_q(r),
            RegionSpec::Column(c) => column_q(c),
            RegionSpec::Quadrant(q) => {
                let (n, r, c) = QUADRANTS[q.min(3)];
                quadrant_q(n, r, c)
            }
            RegionSpec::RowBand2(r) => row_band_q(r.min(6)),
            RegionSpec::ColumnBand2(c) => column_band_q(c.min(6)),
            RegionSpec::Block2x2(a) => block_q(a.row().min(6), a.col().min(6)),
            RegionSpec::FrontierRing { anchor, radius } => {
                let eligible = state.hits | frontier(state.hits, state.misses);
                if eligible & anchor.bit() == 0 {
                    return Err(SpecError::UnknownAnchor(format!(
                        "{anchor} is neither a hit nor a frontier cell"
                    )));
                }
                let region = ball(anchor.bit(), radius) & !anchor.bit() & state.unknown();
                Question {
                    id: format!("frontier-ring:{anchor}:r{radius}"),
                    text: format!("Is there a ship within distance {radius} of {anchor}?"),
                    family: Family::FrontierRing,
                    region,
                }
            }
            RegionSpec::ClusterNeighborhood { anchor, depth } => {
                let cluster = hit_clusters(state.hits)
                    .into_iter()
                    .find(|&c| c & anchor.bit() != 0)
                    .ok_or_else(|| {
                        SpecError::UnknownAnchor(format!("{anchor} is not in a hit cluster"))
                    })?;
                let region = ball(cluster, depth) & !cluster & state.unknown();
                Question {
                    id: format!("cluster-neighborhood:{anchor}:d{depth}"),
                    text: format!(
                        "Is there a ship next to the hit cluster at {anchor} (depth {depth})?"
                    ),
                    family: Family::ClusterNeighborhood,
                    region,
                }
            }
        };
        if question.region == 0 {
            return Err(SpecError::EmptyRegion);
        }
        if is_asked(&question, asked) {
            return Err(SpecError::DuplicateQuestion(question.id));
        }
        Ok(question)
    }
}

/// Cells within Manhattan distance `radius` of any cell of `mask` (the mask included).
fn ball(mask: u64, radius: usize) -> u64 {
    (0..radius).fold(mask, |m, _| m | neighbours4(m))
}

/// The cells of a region as ids, in index order (for display).
pub fn region_ids(region: u64) -> Vec<String> {
    cells_of(region).map(|c| c.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalogue_order_ids_and_groups() {
        let cat = catalogue();
        assert_eq!(cat.len(), CATALOGUE_LEN);
        assert_eq!(cat[0].id, "row:A");
        assert_eq!(cat[0].text, "Is there a ship in row A?");
        assert_eq!(cat[8].id, "column:1");
        assert_eq!(cat[16].id, "quadrant:top-left");
        assert_eq!(cat[16].text, "Is there a ship in the top-left quadrant?");
        assert_eq!(cat[19].id, "quadrant:bottom-right");
        assert_eq!(cat[20].id, "row-band-2:A-B");
        assert_eq!(cat[20].text, "Is there a ship in rows A-B?");
        assert_eq!(cat[27].id, "column-band-2:1-2");
        assert_eq!(cat[34].id, "block-2x2:A1-B2");
        assert_eq!(cat[35].id, "block-2x2:A2-B3");
        assert_eq!(cat[82].id, "block-2x2:G7-H8");
        assert_eq!(
            cat.iter()
                .filter(|q| q.family.group() == Group::Coarse)
                .count(),
            20
        );
        let sizes: Vec<u32> = cat.iter().map(|q| q.region.count_ones()).collect();
        assert!(sizes[..16].iter().all(|&n| n == 8));
        assert!(sizes[16..34].iter().all(|&n| n == 16));
        assert!(sizes[34..].iter().all(|&n| n == 4));
        assert_eq!(template_index("block-2x2:G7-H8"), Some(82));
        let ids: std::collections::BTreeSet<&str> = cat.iter().map(|q| q.id.as_str()).collect();
        assert_eq!(ids.len(), CATALOGUE_LEN);
    }

    fn state(hits: &[&str], misses: &[&str]) -> VisibleState {
        let m = |v: &[&str]| {
            v.iter()
                .map(|s| s.parse::<Cell>().unwrap().bit())
                .fold(0, |a, b| a | b)
        };
        VisibleState {
            hits: m(hits),
            misses: m(misses),
        }
    }

    fn compile(json: &str, st: &VisibleState) -> Result<Question, SpecError> {
        RegionSpec::parse_json(json)?.compile(st, [])
    }

    #[test]
    fn template_kinds_map_to_template_ids() {
        let st = VisibleState::default();
        let q = compile(
            r#"{"predicate":"exists_ship","region":{"kind":"row","row":"C"}}"#,
            &st,
        );
        assert_eq!(q.unwrap(), catalogue()[2]);
        let q = compile(
            r#"{"predicate":"exists_ship","region":{"kind":"block_2x2","anchor":"G7"}}"#,
            &st,
        );
        assert_eq!(q.unwrap().id, "block-2x2:G7-H8");
        let q = compile(
            r#"{"predicate":"exists_ship","region":{"kind":"column_band_2","startColumn":7}}"#,
            &st,
        );
        assert_eq!(q.unwrap().id, "column-band-2:7-8");
    }

    #[test]
    fn frontier_ring_keeps_unknown_cells_only() {
        let st = state(&["E6"], &["E7"]);
        let spec = r#"{"predicate":"exists_ship","region":{"kind":"frontier_ring","anchor":"E6"}}"#;
        let q = compile(spec, &st).unwrap();
        assert_eq!(q.id, "frontier-ring:E6:r1");
        assert_eq!(region_ids(q.region), ["D6", "E5", "F6"]);
        let spec2 = r#"{"predicate":"exists_ship","region":{"kind":"frontier_ring","anchor":"E6","radius":2}}"#;
        assert_eq!(compile(spec2, &st).unwrap().region.count_ones(), 11);
        // A frontier cell is also a valid anchor.
        let spec3 =
            r#"{"predicate":"exists_ship","region":{"kind":"frontier_ring","anchor":"D6"}}"#;
        assert_eq!(
            region_ids(compile(spec3, &st).unwrap().region),
            ["C6", "D5", "D7"]
        );
    }

    #[test]
    fn cluster_neighborhood_surrounds_the_cluster() {
        let st = state(&["E5", "E6"], &[]);
        let spec = r#"{"predicate":"exists_ship","region":{"kind":"cluster_neighborhood","anchor":"E5","depth":1}}"#;
        let q = compile(spec, &st).unwrap();
        assert_eq!(q.id, "cluster-neighborhood:E5:d1");
        assert_eq!(region_ids(q.region), ["D5", "D6", "E4", "E7", "F5", "F6"]);
    }

    #[test]
    fn the_seven_errors() {
        let st = state(&["E6"], &["D6", "E5", "E7", "F6"]);
        let cases = [
            ("not json", "INVALID_SPEC"),
            (r#"{"predicate":"exists_ship"}"#, "INVALID_SPEC"),
            (
                r#"{"predicate":"count_ships","region":{"kind":"row","row":"A"}}"#,
                "UNSUPPORTED_PREDICATE",
            ),
            (
                r#"{"predicate":"exists_ship","region":{"kind":"diagonal"}}"#,
                "INVALID_REGION",
            ),
            (
                r#"{"predicate":"exists_ship","region":{"kind":"row"}}"#,
                "INVALID_REGION",
            ),
            (
                r#"{"predicate":"exists_ship","region":{"kind":"row","row":"J"}}"#,
                "OUT_OF_RANGE",
            ),
            (
                r#"{"predicate":"exists_ship","region":{"kind":"column","column":9}}"#,
                "OUT_OF_RANGE",
            ),
            (
                r#"{"predicate":"exists_ship","region":{"kind":"block_2x2","anchor":"H1"}}"#,
                "OUT_OF_RANGE",
            ),
            (
                r#"{"predicate":"exists_ship","region":{"kind":"frontier_ring","anchor":"E6","radius":3}}"#,
                "OUT_OF_RANGE",
            ),
            (
                r#"{"predicate":"exists_ship","region":{"kind":"frontier_ring","anchor":"A1"}}"#,
                "UNKNOWN_ANCHOR",
            ),
            (
                r#"{"predicate":"exists_ship","region":{"kind":"cluster_neighborhood","anchor":"A1"}}"#,
                "UNKNOWN_ANCHOR",
            ),
            (
                r#"{"predicate":"exists_ship","region":{"kind":"frontier_ring","anchor":"E6"}}"#,
                "EMPTY_REGION",
            ),
        ];
        for (json, code) in cases {
            let got = compile(json, &st).map(|q| q.id);
            assert_eq!(got.map_err(|e| e.code()), Err(code), "{json}");
        }
        let spec = RegionSpec::parse_json(
            r#"{"predicate":"exists_ship","region":{"kind":"row","row":"A"}}"#,
        )
        .unwrap();
        let dup = spec.compile(&st, ["  is there a SHIP in row A? "]);
        assert_eq!(dup.map_err(|e| e.code()), Err("DUPLICATE_QUESTION"));
        assert!(spec.compile(&st, ["row:A"]).is_err());
        assert!(spec.compile(&st, ["row:B"]).is_ok());
    }
}
