//! Prints the syntax errors of the files given on the command line (a debugging aid).

fn main() {
    for path in std::env::args().skip(1) {
        let Ok(text) = std::fs::read_to_string(&path) else {
            println!("{path}: cannot read");
            continue;
        };
        let parse = harness_grammar::parse(&text);
        println!(
            "{path}: {} items, {} errors",
            parse.file.items.len(),
            parse.errors.len()
        );
        for error in &parse.errors {
            println!(
                "  {:?} {}..{}: {}",
                error.kind, error.span.start, error.span.end, error.message
            );
        }
    }
}
