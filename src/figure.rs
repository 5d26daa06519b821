//! Writing a figure: the SVG as drawn, or rendered to PNG or PDF, at a chosen width and in a
//! chosen font. The format follows the file's extension.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Args;
use harness::plot::{self, Style};
use resvg::usvg::{self, fontdb};

/// How `--plot` figures are written.
#[derive(Args, Debug, Clone, Default)]
pub struct FigureArgs {
    /// The figure's width: in pixels for SVG and PNG, in points for PDF (default: the figure's
    /// own, and twice that in pixels for PNG so that its text stays sharp).
    #[arg(long, value_name = "PX")]
    pub plot_width: Option<f64>,
    /// The font of the figure's text: a family installed on this machine (such as `DejaVu
    /// Serif`) or a font file (.ttf, .otf, .ttc).
    #[arg(long, value_name = "FAMILY|FILE")]
    pub font: Option<String>,
}

/// The formats a figure can be written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Svg,
    Png,
    Pdf,
}

/// The format `file`'s extension names.
fn format_of(file: &Path) -> Result<Format, String> {
    let extension = file
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match extension.as_deref() {
        Some("svg") => Ok(Format::Svg),
        Some("png") => Ok(Format::Png),
        Some("pdf") => Ok(Format::Pdf),
        _ => Err(format!(
            "--plot {}: the extension names the format; use .svg, .png or .pdf",
            file.display()
        )),
    }
}

/// Checks `--plot FILE` and the figure flags before any work is done, so that a bad flag does
/// not follow a long computation.
pub fn check(file: &Path, args: &FigureArgs) -> Result<(), String> {
    format_of(file)?;
    if let Some(width) = args.plot_width
        && !(width.is_finite() && (16.0..=20_000.0).contains(&width))
    {
        return Err(format!(
            "--plot-width {width}: give a width between 16 and 20000"
        ));
    }
    if let Some(font) = &args.font
        && font.trim().is_empty()
    {
        return Err("--font needs a family name or a font file".into());
    }
    Ok(())
}

/// Writes the figure `svg` to `file` in the format its extension names.
pub fn write(file: &Path, svg: &str, args: &FigureArgs) -> Result<(), String> {
    check(file, args)?;
    let format = format_of(file)?;
    let bytes = match format {
        Format::Svg => {
            let style = Style {
                width: args.plot_width,
                font: args.font.as_ref().map(|font| family_for_svg(font)),
            };
            plot::restyle(svg, &style).into_bytes()
        }
        Format::Png | Format::Pdf => {
            let (fonts, family) = fonts(args.font.as_deref())?;
            let style = Style {
                width: None,
                font: family,
            };
            let options = usvg::Options {
                fontdb: Arc::new(fonts),
                ..usvg::Options::default()
            };
            let tree =
                usvg::Tree::from_str(&plot::restyle(svg, &style), &options).map_err(|error| {
                    format!("the figure is not valid SVG ({error}); please report this")
                })?;
            if format == Format::Png {
                png(&tree, args.plot_width)?
            } else {
                pdf(&tree, args.plot_width)?
            }
        }
    };
    std::fs::write(file, bytes).map_err(|error| format!("cannot write {}: {error}", file.display()))
}

/// The family to write into an SVG for `--font`: a file's own family name, or the name given.
fn family_for_svg(font: &str) -> String {
    let path = PathBuf::from(font);
    if path.is_file() {
        let mut db = fontdb::Database::new();
        if db.load_font_file(&path).is_ok()
            && let Some(face) = db.faces().next()
            && let Some((name, _)) = face.families.first()
        {
            return name.clone();
        }
    }
    font.to_string()
}

/// The fonts to render with, and the family to set the text in when `--font` asks for one.
/// Without `--font`, the figure's generic sans-serif resolves to the first common sans-serif
/// family installed here.
fn fonts(font: Option<&str>) -> Result<(fontdb::Database, Option<String>), String> {
    let mut db = fontdb::Database::new();
    let mut family = None;
    if let Some(font) = font {
        let path = PathBuf::from(font);
        if path.is_file() {
            db.load_font_file(&path)
                .map_err(|error| format!("--font {font}: cannot read the font file ({error})"))?;
            let name = db
                .faces()
                .next()
                .and_then(|face| face.families.first())
                .map(|(name, _)| name.clone())
                .ok_or_else(|| format!("--font {font}: the file holds no font face"))?;
            family = Some(name);
        } else {
            family = Some(font.to_string());
        }
    }
    db.load_system_fonts();
    if db.is_empty() {
        return Err(
            "no font is installed for the figure's text; install one (Debian: fonts-dejavu-core) \
             or pass --font FILE.ttf, or write the figure as .svg"
                .into(),
        );
    }
    if let Some(name) = &family {
        let query = fontdb::Query {
            families: &[fontdb::Family::Name(name)],
            ..fontdb::Query::default()
        };
        if db.query(&query).is_none() {
            return Err(format!(
                "--font {name}: no such font family is installed; name an installed family \
                 (`fc-list : family` lists them) or a font file"
            ));
        }
    }
    let installed: Vec<String> = db
        .faces()
        .flat_map(|face| face.families.iter().map(|(name, _)| name.clone()))
        .collect();
    let sans = [
        "Helvetica",
        "Arial",
        "Liberation Sans",
        "DejaVu Sans",
        "Noto Sans",
        "FreeSans",
    ]
    .into_iter()
    .find(|name| installed.iter().any(|i| i == name))
    .map(str::to_string)
    .or_else(|| installed.first().cloned());
    if let Some(sans) = sans {
        db.set_sans_serif_family(sans);
    }
    Ok((db, family))
}

/// The figure as PNG, `width` pixels wide (default twice its own width).
fn png(tree: &usvg::Tree, width: Option<f64>) -> Result<Vec<u8>, String> {
    let size = tree.size();
    let scale = width.map_or(2.0, |w| w / f64::from(size.width())) as f32;
    let (w, h) = (
        (size.width() * scale).round().max(1.0) as u32,
        (size.height() * scale).round().max(1.0) as u32,
    );
    let mut pixmap = resvg::tiny_skia::Pixmap::new(w, h).ok_or_else(|| {
        format!("a {w}×{h} image is too large to render; give a smaller --plot-width")
    })?;
    resvg::render(
        tree,
        resvg::tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|error| format!("cannot encode the PNG: {error}"))
}

/// The figure as a one-page PDF, `width` points wide (default its own width).
fn pdf(tree: &usvg::Tree, width: Option<f64>) -> Result<Vec<u8>, String> {
    let mut page = svg2pdf::PageOptions::default();
    if let Some(width) = width {
        // The page's resolution sets how many SVG pixels make a point.
        page.dpi = 72.0 * tree.size().width() / width as f32;
    }
    svg2pdf::to_pdf(tree, svg2pdf::ConversionOptions::default(), page)
        .map_err(|error| format!("cannot convert the figure to PDF: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figure() -> String {
        plot::signed_effects(
            "Per-instance effect",
            "two instances",
            "Δ",
            &[plot::Effect {
                label: "a".into(),
                value: 0.2,
                lo: 0.1,
                hi: 0.3,
            }],
            None,
        )
    }

    fn scratch(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("harness-figure-{}-{name}", std::process::id()))
    }

    #[test]
    fn the_extension_picks_the_format() {
        let svg = figure();
        let png = scratch("f.png");
        write(&png, &svg, &FigureArgs::default()).unwrap();
        let bytes = std::fs::read(&png).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        let width = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
        assert_eq!(width, 1440, "twice the figure's width by default");
        let sized = FigureArgs {
            plot_width: Some(300.0),
            font: None,
        };
        write(&png, &svg, &sized).unwrap();
        let bytes = std::fs::read(&png).unwrap();
        assert_eq!(u32::from_be_bytes(bytes[16..20].try_into().unwrap()), 300);
        let pdf = scratch("f.PDF");
        write(&pdf, &svg, &FigureArgs::default()).unwrap();
        assert!(std::fs::read(&pdf).unwrap().starts_with(b"%PDF-"));
        let out = scratch("f.svg");
        write(&out, &svg, &sized).unwrap();
        assert!(
            std::fs::read_to_string(&out)
                .unwrap()
                .contains("width=\"300\"")
        );
        for file in [png, pdf, out] {
            std::fs::remove_file(file).unwrap();
        }
    }

    #[test]
    fn bad_figure_flags_are_clear_errors() {
        let error = write(&scratch("f.jpg"), &figure(), &FigureArgs::default()).unwrap_err();
        assert!(error.contains(".svg, .png or .pdf"), "{error}");
        let wide = FigureArgs {
            plot_width: Some(f64::NAN),
            font: None,
        };
        assert!(
            check(Path::new("f.png"), &wide)
                .unwrap_err()
                .contains("--plot-width")
        );
        let unknown = FigureArgs {
            plot_width: None,
            font: Some("No Such Family 42".into()),
        };
        let error = write(&scratch("g.png"), &figure(), &unknown).unwrap_err();
        assert!(error.contains("no such font family"), "{error}");
        assert!(!scratch("g.png").exists(), "nothing is written on an error");
    }
}
