//! `docs` on a small API: the Markdown and HTML pages, escaping, and the pages kept
//! in a directory (verify, stale pages removed).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::json;

use super::*;

fn backup() -> Value {
    json!({
        "spec": {
            "group": "backup.example.com",
            "names": {"kind": "Backup", "plural": "backups", "shortNames": ["bk"]},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1alpha1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "additionalPrinterColumns": [
                    {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"}
                ],
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "metadata": {"type": "object"},
                    "spec": {
                        "type": "object",
                        "description": "The desired state of a Backup.",
                        "required": ["replicas"],
                        "x-kubernetes-validations": [{
                            "rule": "self.replicas <= 3 || has(self.schedule)",
                            "message": "more than 3 replicas need a schedule"
                        }],
                        "properties": {
                            "replicas": {"type": "integer", "format": "int32",
                                "minimum": 1, "maximum": 10, "default": 1,
                                "description": "How many replicas, 1 to 10."},
                            "schedule": {"type": "string", "pattern": "^(\\S+\\s+){4}\\S+$",
                                "description": "When to take a backup."},
                            "targets": {"type": "array", "items": {"type": "object",
                                "properties": {"name": {"type": "string",
                                    "enum": ["a", "b"]}}}}
                        }
                    }
                }}}
            }]
        }
    })
}

#[test]
fn a_kind_page_shows_fields_types_validations_rules_and_links() {
    let files = pages(
        &[backup()],
        "kube-codegen docs --input src/apis --output docs/api",
        Format::Markdown,
    );
    assert_eq!(files.len(), 2);
    let page = &files[0].contents;
    assert_eq!(files[0].path, Path::new("backup.example.com_v1alpha1.md"));
    assert!(page.starts_with(MARKDOWN.header), "{page}");
    for shown in [
        "## Backup",
        "short names `bk`, subresources `status`, the storage version",
        "| Replicas | integer | `.spec.replicas` |  |",
        "| `spec` | [object](#backupspec) |",
        "### Backup.spec",
        "Validation: rule `self.replicas <= 3 || has(self.schedule)`: \"more than 3 replicas need a schedule\"",
        "| `replicas` | integer (int32) | How many replicas, 1 to 10. | required; default `1`; minimum 1; maximum 10 |",
        "| `schedule` | string | When to take a backup. | pattern `^(\\S+\\s+){4}\\S+$` |",
        "| `targets` | [\\[\\]object](#backupspectargets) |",
        "### Backup.spec.targets\\[\\]",
        "one of `\"a\"`, `\"b\"`",
    ] {
        assert!(page.contains(shown), "{shown} in:\n{page}");
    }
    assert!(!page.contains("### Backup.metadata"), "{page}");
    assert!(
        files[1]
            .contents
            .contains("- [backup.example.com/v1alpha1](backup.example.com_v1alpha1.md)")
    );
}

const COMMAND: &str = "kube-codegen docs --input src/apis --output docs/api --format html";

/// The HTML pages of `crds`, by file name.
fn html_pages(crds: &[Value]) -> Vec<OutputFile> {
    pages(crds, COMMAND, Format::Html)
}

/// The values of `attr="..."` in `html`.
fn attributes<'a>(html: &'a str, attr: &str) -> Vec<&'a str> {
    let lead = format!("{attr}=\"");
    html.match_indices(&lead)
        .map(|(at, _)| {
            let rest = &html[at + lead.len()..];
            &rest[..rest.find('"').unwrap()]
        })
        .collect()
}

#[test]
fn an_html_page_shows_what_the_markdown_page_shows_with_the_same_anchors() {
    let files = html_pages(&[backup()]);
    let paths: Vec<&Path> = files.iter().map(|f| f.path.as_path()).collect();
    assert_eq!(
        paths,
        [
            Path::new("backup.example.com_v1alpha1.html"),
            Path::new("index.html")
        ]
    );
    let page = &files[0].contents;
    assert!(
        page.starts_with(&format!(
            "{}\n<!-- {COMMAND} -->\n<!DOCTYPE html>\n<html lang=\"en\">\n",
            HTML.header
        )),
        "{page}"
    );
    for shown in [
        "<title>backup.example.com/v1alpha1</title>",
        "<li><a href=\"#backup\">Backup</a></li>",
        "<h2 id=\"backup\">Backup</h2>\n<p><code>apiVersion: backup.example.com/v1alpha1</code>, Namespaced, resource <code>backups</code>, short names <code>bk</code>, subresources <code>status</code>, the storage version.</p>",
        "<tr><td>Replicas</td><td>integer</td><td><code>.spec.replicas</code></td><td></td></tr>",
        "<tr><td><code>spec</code></td><td><a href=\"#backupspec\">object</a></td><td>The desired state of a Backup.</td><td>rule <code>self.replicas &lt;= 3",
        "<h3 id=\"backupspec\">Backup.spec</h3>\n<p>The desired state of a Backup.</p>\n<p>Validation: rule <code>self.replicas &lt;= 3 || has(self.schedule)</code>: &quot;more than 3 replicas need a schedule&quot;</p>",
        "<tr><td><code>replicas</code></td><td>integer (int32)</td><td>How many replicas, 1 to 10.</td><td>required; default <code>1</code>; minimum 1; maximum 10</td></tr>",
        "<tr><td><code>schedule</code></td><td>string</td><td>When to take a backup.</td><td>pattern <code>^(\\S+\\s+){4}\\S+$</code></td></tr>",
        "<tr><td><code>targets</code></td><td><a href=\"#backupspectargets\">[]object</a></td>",
        "<h3 id=\"backupspectargets\">Backup.spec.targets[]</h3>",
        "<td>one of <code>&quot;a&quot;</code>, <code>&quot;b&quot;</code></td>",
    ] {
        assert!(page.contains(shown), "{shown} in:\n{page}");
    }
    assert!(page.ends_with("</table>\n</body>\n</html>\n"), "{page}");
    // Every link within the page reaches a heading of it, and nothing is fetched.
    let ids = attributes(page, "id");
    for href in attributes(page, "href") {
        match href.strip_prefix('#') {
            Some(id) => assert!(ids.contains(&id), "#{id} has no heading in:\n{page}"),
            None => assert_eq!(href, "index.html"),
        }
    }
    for absent in ["<script", "src=", "<link", "http://", "https://"] {
        assert!(!page.contains(absent), "{absent} in:\n{page}");
    }
    let index = &files[1].contents;
    assert!(
        index.contains(
            "<li><a href=\"backup.example.com_v1alpha1.html\">backup.example.com/v1alpha1</a></li>"
        ),
        "{index}"
    );
}

#[test]
fn html_escapes_every_text_from_the_schema() {
    let mut crd = backup();
    let spec = &mut crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
    spec["description"] = json!("Keeps <b>bold</b> & \"quoted\" 'text'.\n\nUse `a < b` here.");
    spec["properties"]["schedule"]["description"] = json!("<script>alert('x')</script>");
    spec["properties"]["schedule"]["pattern"] = json!("^<[a-z]+>&$");
    spec["x-kubernetes-validations"] = json!([
        {"rule": "self.a < self.b && self.c > 0", "message": "a must be < b & \"c\" > 0"},
        {"rule": "self.d != ''", "messageExpression": "'d <' + self.e"}
    ]);
    crd["spec"]["versions"][0]["additionalPrinterColumns"][0]["description"] =
        json!("count <n> & more");
    let page = &html_pages(&[crd])[0].contents;
    for shown in [
        "<p>Keeps &lt;b&gt;bold&lt;/b&gt; &amp; &quot;quoted&quot; &#39;text&#39;.</p>\n<p>Use <code>a &lt; b</code> here.</p>",
        "<td>&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;</td>",
        "pattern <code>^&lt;[a-z]+&gt;&amp;$</code>",
        "rule <code>self.a &lt; self.b &amp;&amp; self.c &gt; 0</code>: &quot;a must be &lt; b &amp; &quot;c&quot; &gt; 0&quot;",
        "rule <code>self.d != &#39;&#39;</code>: message <code>&#39;d &lt;&#39; + self.e</code>",
        "<td>count &lt;n&gt; &amp; more</td>",
    ] {
        assert!(page.contains(shown), "{shown} in:\n{page}");
    }
    for raw in ["<b>", "<script>", "<n>", "a < b", "&&"] {
        assert!(!page.contains(raw), "{raw} unescaped in:\n{page}");
    }
    // A path cannot end the header's comment early.
    let files = pages(
        &[backup()],
        "kube-codegen docs --output a-->b",
        Format::Html,
    );
    assert!(
        files[0]
            .contents
            .contains("<!-- kube-codegen docs --output a-- >b -->\n")
    );
}

#[test]
fn pages_are_the_same_bytes_every_time_and_both_formats_hold_each() {
    let crds = [backup()];
    let both = pages(&crds, COMMAND, Format::Both);
    let names: Vec<String> = both.iter().map(|f| f.path.display().to_string()).collect();
    assert_eq!(
        names,
        [
            "backup.example.com_v1alpha1.md",
            "index.md",
            "backup.example.com_v1alpha1.html",
            "index.html"
        ]
    );
    let markdown = pages(&crds, COMMAND, Format::Markdown);
    assert_eq!(both[..2], markdown[..]);
    assert_eq!(both[2..], html_pages(&crds)[..]);
    assert_eq!(both, pages(&crds, COMMAND, Format::Both));
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "kube-codegen-docs-test-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn keep(dir: &Path, files: &[OutputFile], format: Format, verify: bool) -> Result<String, Error> {
    output::write_or_verify_styles(dir, files, format.styles(), verify, COMMAND)
}

#[test]
fn verify_finds_a_drifted_html_page_and_writing_removes_stale_pages() {
    let dir = scratch("keep");
    let files = pages(&[backup()], COMMAND, Format::Both);
    keep(&dir, &files, Format::Both, false).unwrap();
    assert!(keep(&dir, &files, Format::Both, true).is_ok());
    // Hand edits of a generated page are drift.
    let page = dir.join("backup.example.com_v1alpha1.html");
    let edited = std::fs::read_to_string(&page)
        .unwrap()
        .replace("How many replicas", "How many");
    std::fs::write(&page, edited).unwrap();
    let drift = keep(&dir, &files, Format::Both, true).unwrap_err();
    assert!(
        matches!(&drift, Error::OutOfDate { details, .. } if details.contains("drifted:") && details.contains("v1alpha1.html")),
        "{drift:?}"
    );
    // A version gone: its pages (of both formats) are stale, removed by a write and named by
    // verify; files without the header are left alone.
    let mut gone = backup();
    gone["spec"]["versions"][0]["name"] = json!("v1");
    std::fs::write(dir.join("notes.html"), "<p>mine</p>\n").unwrap();
    let now = pages(&[gone], COMMAND, Format::Both);
    let stale = keep(&dir, &now, Format::Both, true).unwrap_err();
    assert!(
        matches!(&stale, Error::OutOfDate { details, .. } if details.contains("stale:") && details.contains("v1alpha1.html")),
        "{stale:?}"
    );
    keep(&dir, &now, Format::Both, false).unwrap();
    let mut left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        [
            "backup.example.com_v1.html",
            "backup.example.com_v1.md",
            "index.html",
            "index.md",
            "notes.html"
        ]
    );
    // Markdown alone manages Markdown pages alone: the HTML ones stay.
    let markdown = pages(&[backup()], COMMAND, Format::Markdown);
    keep(&dir, &markdown, Format::Markdown, false).unwrap();
    assert!(dir.join("backup.example.com_v1.html").is_file());
    assert!(!dir.join("backup.example.com_v1.md").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_page_in_the_way_stops_every_write() {
    let dir = scratch("refused");
    std::fs::write(dir.join("index.html"), "<p>mine</p>\n").unwrap();
    let files = pages(&[backup()], COMMAND, Format::Both);
    let refused = keep(&dir, &files, Format::Both, false).unwrap_err();
    assert!(matches!(refused, Error::Refused(_)), "{refused:?}");
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(left.len(), 1, "only index.html, untouched");
    assert_eq!(
        std::fs::read_to_string(dir.join("index.html")).unwrap(),
        "<p>mine</p>\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// What mdBook makes of a Markdown page, read from pulldown-cmark's events with mdBook's
/// options (mdBook 0.5's `new_cmark_parser`), as far as the tests below look.
#[derive(Debug, Default)]
struct Rendered {
    /// The page as HTML, as pulldown-cmark writes it.
    html: String,
    /// Raw HTML the page holds (blocks and inline).
    raw_html: Vec<String>,
    /// Each heading's id, as mdBook gives it, and its text.
    headings: Vec<(String, String)>,
    /// Each paragraph's text (code spans' contents included).
    paragraphs: Vec<String>,
    /// Every link's destination.
    links: Vec<String>,
    /// Each table's rows (its header first), each row's cells.
    tables: Vec<Vec<Vec<Cell>>>,
}

/// One table cell, rendered.
#[derive(Debug, Default, Clone)]
struct Cell {
    /// Its text (code spans' contents included).
    text: String,
    /// Its code spans' contents.
    code: Vec<String>,
    /// Its links' destinations.
    links: Vec<String>,
}

/// The id mdBook 0.5 (`id_from_content`) gives a heading of `text`.
fn mdbook_id(text: &str) -> String {
    text.trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            c if c.is_alphanumeric() || c == '_' || c == '-' => Some(c),
            c if c.is_whitespace() => Some('-'),
            _ => None,
        })
        .collect()
}

/// `id` made unique as mdBook 0.5 (`unique_id`) makes it: `id`, else the first free of
/// `id-1`, `id-2`, ...
fn mdbook_unique(id: String, used: &mut std::collections::HashSet<String>) -> String {
    if used.insert(id.clone()) {
        return id;
    }
    (1..)
        .map(|n| format!("{id}-{n}"))
        .find(|candidate| used.insert(candidate.clone()))
        .unwrap_or_default()
}

/// Renders `markdown` as mdBook does: its parser options, its heading ids (numbered `-1`,
/// `-2`, ... when repeated). Panics on any construct the pages never mean to hold: an
/// image, a footnote, a task list, a quote, a definition list (whose terms mdBook also gives
/// ids), emphasis, a strikethrough, a code block, a heading with attributes.
fn render(markdown: &str) -> Rendered {
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd, html};
    let mut options = Options::empty();
    for option in [
        Options::ENABLE_TABLES,
        Options::ENABLE_FOOTNOTES,
        Options::ENABLE_STRIKETHROUGH,
        Options::ENABLE_TASKLISTS,
        Options::ENABLE_HEADING_ATTRIBUTES,
        Options::ENABLE_SMART_PUNCTUATION,
        Options::ENABLE_DEFINITION_LIST,
        Options::ENABLE_GFM,
    ] {
        options.insert(option);
    }
    let events: Vec<Event> = Parser::new_ext(markdown, options).collect();
    let mut out = Rendered::default();
    html::push_html(&mut out.html, events.iter().cloned());
    let mut used = std::collections::HashSet::new();
    // The text being gathered (a heading's, a paragraph's or a cell's), and the cell.
    let mut text: Option<String> = None;
    let mut cell: Option<Cell> = None;
    for event in events {
        match event {
            Event::Start(Tag::Heading {
                id, classes, attrs, ..
            }) => {
                assert!(
                    id.is_none() && classes.is_empty() && attrs.is_empty(),
                    "a heading with attributes in:\n{markdown}"
                );
                text = Some(String::new());
            }
            Event::End(TagEnd::Heading(_)) => {
                let shown = text.take().unwrap_or_default();
                let id = mdbook_unique(mdbook_id(&shown), &mut used);
                out.headings.push((id, shown));
            }
            Event::Start(Tag::Paragraph) => text = Some(String::new()),
            Event::End(TagEnd::Paragraph) => out.paragraphs.extend(text.take()),
            Event::Start(Tag::Table(columns)) => {
                assert_eq!(columns.len(), 4, "a table of 4 columns in:\n{markdown}");
                out.tables.push(Vec::new());
            }
            Event::Start(Tag::TableHead | Tag::TableRow) => {
                if let Some(table) = out.tables.last_mut() {
                    table.push(Vec::new());
                }
            }
            Event::Start(Tag::TableCell) => cell = Some(Cell::default()),
            Event::End(TagEnd::TableCell) => {
                let row = out.tables.last_mut().and_then(|t| t.last_mut());
                row.unwrap().extend(cell.take());
            }
            Event::Start(Tag::Link { dest_url, .. }) => {
                out.links.push(dest_url.to_string());
                if let Some(cell) = &mut cell {
                    cell.links.push(dest_url.to_string());
                }
            }
            Event::Text(t) => {
                if let Some(cell) = &mut cell {
                    cell.text.push_str(&t);
                }
                if let Some(text) = &mut text {
                    text.push_str(&t);
                }
            }
            Event::Code(c) => {
                if let Some(cell) = &mut cell {
                    cell.text.push_str(&c);
                    cell.code.push(c.to_string());
                }
                if let Some(text) = &mut text {
                    text.push_str(&c);
                }
            }
            Event::Html(h) | Event::InlineHtml(h) => out.raw_html.push(h.to_string()),
            Event::Start(Tag::List(_) | Tag::Item | Tag::HtmlBlock)
            | Event::End(_)
            | Event::SoftBreak => {}
            other => panic!("{other:?} in:\n{markdown}"),
        }
    }
    out
}

/// The HTML elements a Markdown page may become: the generator's own, none with an
/// attribute but a link's `href`.
const OURS: [&str; 14] = [
    "h1", "h2", "h3", "p", "ul", "li", "a", "code", "table", "thead", "tbody", "tr", "th", "td",
];

/// Renders each Markdown page of `files` as mdBook does and checks that nothing of the CRDs'
/// text became markup: the only HTML is the header's comments, every element is one the
/// generator writes, every link goes to a heading of the page (which exactly one heading
/// has) or to another page, no link runs script, and every table row has its 4 cells. The
/// rendered pages, by file name.
fn rendered_markdown(files: &[OutputFile]) -> BTreeMap<String, Rendered> {
    let mut out = BTreeMap::new();
    for file in files
        .iter()
        .filter(|f| f.path.extension() == Some("md".as_ref()))
    {
        let page = &file.contents;
        let rendered = render(page);
        assert_eq!(
            rendered.raw_html.concat(),
            format!("{}\n<!-- {COMMAND} -->\n", MARKDOWN.header)
        );
        // Every tag of the HTML is one of ours.
        let mut rest = rendered.html.as_str();
        while let Some(at) = rest.find('<') {
            rest = &rest[at + 1..];
            if let Some(comment) = rest.strip_prefix("!--") {
                rest = &comment[comment.find("-->").unwrap() + 3..];
                continue;
            }
            let tag = &rest[..rest.find('>').unwrap()];
            let name = tag.trim_start_matches('/');
            let (name, attributes) = name.split_once(' ').unwrap_or((name, ""));
            assert!(OURS.contains(&name), "<{tag}> in:\n{}", rendered.html);
            if !attributes.is_empty() {
                let target = attributes
                    .strip_prefix("href=\"")
                    .and_then(|a| a.strip_suffix('"'));
                assert!(
                    name == "a" && target.is_some_and(|t| !t.contains('"')),
                    "<{tag}> in:\n{}",
                    rendered.html
                );
            }
        }
        for target in &rendered.links {
            assert!(!target.contains(':'), "a link with a scheme: {target}");
            match target.strip_prefix('#') {
                Some(id) => {
                    let holders = rendered.headings.iter().filter(|(h, _)| h == id).count();
                    assert_eq!(holders, 1, "#{id} in:\n{page}\n{:?}", rendered.headings);
                }
                None => assert!(target.ends_with(".md"), "{target}"),
            }
        }
        for table in &rendered.tables {
            for row in table {
                assert_eq!(row.len(), 4, "{row:?} in:\n{page}");
            }
        }
        out.insert(file.path.display().to_string(), rendered);
    }
    out
}

#[test]
fn mdbook_renders_the_pages_with_every_link_reaching_its_heading() {
    let rendered = rendered_markdown(&pages(&[backup()], COMMAND, Format::Markdown));
    let page = &rendered["backup.example.com_v1alpha1.md"];
    let headings: Vec<(&str, &str)> = page
        .headings
        .iter()
        .map(|(id, text)| (id.as_str(), text.as_str()))
        .collect();
    assert_eq!(
        headings,
        [
            ("backupexamplecomv1alpha1", "backup.example.com/v1alpha1"),
            ("backup", "Backup"),
            ("backupspec", "Backup.spec"),
            ("backupspectargets", "Backup.spec.targets[]"),
        ]
    );
    assert_eq!(page.links, ["#backup", "#backupspec", "#backupspectargets"]);
    let index = &rendered["index.md"];
    assert_eq!(index.links, ["backup.example.com_v1alpha1.md"]);
}

/// A CRD whose every text tries to become markup: HTML, links that run script, Markdown that
/// would open blocks, pipes that would split cells, backticks that would end code spans,
/// headings with mdBook's attributes, and names whose anchors collide.
fn hostile() -> Value {
    let mut crd = backup();
    let version = &mut crd["spec"]["versions"][0];
    version["additionalPrinterColumns"] = json!([{
        "name": "</td></tr></table><script>alert(1)</script>",
        "type": "string|x",
        "jsonPath": ".spec.a|b`c",
        "description": "<img src=x onerror=alert(1)>"
    }]);
    let spec = &mut version["schema"]["openAPIV3Schema"]["properties"]["spec"];
    spec["description"] = json!(
        "# Not a heading\n\n<a href=\"javascript:alert(1)\">x</a>\n\n1. not a list\n\n\
         : not a definition\n\n> not a quote\n\n- not an item\n\n```\nnot a block\n```\n\n\
         ``` a``b ```\n\n\
         [x](javascript:alert(1)) [y](JaVaScRiPt:alert(1)) ![i](x.png) *not* _emphasis_ \
         ~~kept~~ $x$ [^1] &amp; \\`kept code` and a lone ` backtick"
    );
    spec["x-kubernetes-validations"] = json!([{
        "rule": "self.a != '`'",
        "message": "</p><script>alert(1)</script> | [x](javascript:alert(1))"
    }]);
    spec["properties"] = json!({
        "a|b": {
            "type": "string",
            "description": "<script>alert(1)</script>\nsecond | line",
            "enum": ["`", "a`b", "``x``", "x|y", "<b>", " padded "]
        },
        "a.b": {"type": "object", "properties": {"x": {"type": "string"}}},
        "ab": {"type": "object", "properties": {"y": {"type": "string"}}},
        "a--b": {"type": "object", "properties": {"z": {"type": "string"}}},
        "x...y'z": {"type": "object", "properties": {"z": {"type": "string"}}},
        "labels": {"type": "object", "additionalProperties": {
            "type": "object", "properties": {"v": {"type": "string"}}}},
        "c {#x onclick=alert(1)}": {"type": "object", "properties": {"z": {"type": "string"}}},
        "[x](javascript:alert(1))": {
            "type": "object",
            "format": "](javascript:alert(1))",
            "properties": {"z": {"type": "string"}}
        }
    });
    crd
}

#[test]
fn markdown_escapes_every_text_of_the_crds_so_none_becomes_markup() {
    let files = pages(&[hostile()], COMMAND, Format::Markdown);
    let rendered = rendered_markdown(&files);
    let page = &rendered["backup.example.com_v1alpha1.md"];
    let source = &files[0].contents;
    // Printer columns: each text whole in its own cell.
    let columns: Vec<&str> = page.tables[0][1].iter().map(|c| c.text.as_str()).collect();
    assert_eq!(
        columns,
        [
            "</td></tr></table><script>alert(1)</script>",
            "string|x",
            ".spec.a|b`c",
            "<img src=x onerror=alert(1)>"
        ]
    );
    // The description's paragraphs are text, its code span code, nothing else markup.
    for shown in [
        "# Not a heading",
        "1. not a list",
        ": not a definition",
        "> not a quote",
        "- not an item",
        "not a block",
        "a``b",
        "[x](javascript:alert(1)) [y](JaVaScRiPt:alert(1)) ![i](x.png) *not* _emphasis_ \
         ~~kept~~ $x$ [^1] &amp; \\kept code and a lone ` backtick",
    ] {
        assert!(
            page.paragraphs.iter().any(|p| p == shown),
            "{shown} in {:?}",
            page.paragraphs
        );
    }
    assert!(
        page.paragraphs
            .iter()
            .any(|p| p.starts_with("<a href=") && p.ends_with(">x</a>")),
        "{:?}",
        page.paragraphs
    );
    assert!(
        source.contains("&amp;amp; \\\\`kept code` and a lone \\` backtick"),
        "{source}"
    );
    assert!(
        page.paragraphs
            .iter()
            .any(|p| p.starts_with("Validation: rule self.a != '`': ")
                && p.ends_with("</p><script>alert(1)</script> | [x](javascript:alert(1))\u{201d}")),
        "{:?}",
        page.paragraphs
    );
    // The spec's fields: names, descriptions and values whole, each in its own cell.
    let spec = page
        .tables
        .iter()
        .find(|t| t.iter().any(|r| r[0].text == "a|b"))
        .unwrap();
    let row = spec.iter().find(|r| r[0].text == "a|b").unwrap();
    assert_eq!(row[0].code, ["a|b"]);
    assert_eq!(row[2].text, "<script>alert(1)</script> second | line");
    assert_eq!(
        row[3].code,
        [
            "\"`\"",
            "\"a`b\"",
            "\"``x``\"",
            "\"x|y\"",
            "\"<b>\"",
            "\" padded \""
        ]
    );
    assert_eq!(spec.len(), 9, "a header and 8 fields: {spec:?}");
    // The headings are the paths as written, without attributes; field links reach them.
    let heading = |id: &str| {
        let found = page.headings.iter().find(|(h, _)| h == id);
        found.map(|(_, text)| text.as_str()).unwrap_or_default()
    };
    for (field, target) in [
        ("a.b", "Backup.spec[\"a.b\"]"),
        ("ab", "Backup.spec.ab"),
        ("a--b", "Backup.spec.a--b"),
        ("x...y'z", "Backup.spec[\"x...y'z\"]"),
        ("labels", "Backup.spec.labels{}"),
        (
            "c {#x onclick=alert(1)}",
            "Backup.spec[\"c {#x onclick=alert(1)}\"]",
        ),
        (
            "[x](javascript:alert(1))",
            "Backup.spec[\"[x](javascript:alert(1))\"]",
        ),
    ] {
        let row = spec.iter().find(|r| r[0].text == field).unwrap();
        assert_eq!(row[1].links.len(), 1, "{row:?}");
        let id = row[1].links[0].trim_start_matches('#');
        assert_eq!(heading(id), target, "{field} links to #{id}");
    }
    let row = spec
        .iter()
        .find(|r| r[0].text == "[x](javascript:alert(1))")
        .unwrap();
    assert_eq!(row[1].text, "object (](javascript:alert(1)))");
    // `a.b` and `ab` would share an anchor: the second is numbered, as mdBook numbers it.
    assert_eq!(heading("backupspecab"), "Backup.spec[\"a.b\"]");
    assert_eq!(heading("backupspecab-1"), "Backup.spec.ab");
}

#[test]
fn code_spans_hold_any_backticks_and_pipes() {
    let mut crd = backup();
    let name = &mut crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        ["targets"]["items"]["properties"]["name"];
    let values = [
        "`", "``", "a`b", "`a", "a`", "x|y", "a\\|b", " ", "  x ", "|`|",
    ];
    name["enum"] = json!(values);
    name["default"] = json!("`");
    name["pattern"] = json!(" a`b ");
    let files = pages(&[crd], COMMAND, Format::Markdown);
    let page = &rendered_markdown(&files)["backup.example.com_v1alpha1.md"];
    let table = page.tables.last().unwrap();
    let shown: Vec<String> = values.iter().map(|v| json!(v).to_string()).collect();
    let mut expected = vec!["\"`\"".to_owned(), " a`b ".to_owned()];
    expected.extend(shown);
    assert_eq!(table[1][3].code, expected);
}

#[test]
fn colliding_anchors_are_numbered_alike_in_both_formats() {
    // A kind whose heading reads as the page's title, and a field whose object's path reads
    // as its sibling's.
    let mut other = backup();
    other["spec"]["names"]["kind"] = json!("BackupExampleComV1alpha1");
    let properties = &mut other["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        ["properties"];
    properties["targets."] = json!({"type": "object", "properties": {"z": {"type": "string"}}});
    let crds = [backup(), other];
    let files = pages(&crds, COMMAND, Format::Both);
    let page = &rendered_markdown(&files)["backup.example.com_v1alpha1.md"];
    let ids: Vec<&str> = page.headings.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "backupexamplecomv1alpha1",
            "backup",
            "backupspec",
            "backupspectargets",
            "backupexamplecomv1alpha1-1",
            "backupexamplecomv1alpha1spec",
            "backupexamplecomv1alpha1spectargets",
            "backupexamplecomv1alpha1spectargets-1",
        ]
    );
    assert_eq!(
        page.headings[6].1,
        "BackupExampleComV1alpha1.spec.targets[]"
    );
    assert_eq!(
        page.headings[7].1,
        "BackupExampleComV1alpha1.spec[\"targets.\"]"
    );
    assert_eq!(
        page.links,
        [
            "#backup",
            "#backupexamplecomv1alpha1-1",
            "#backupspec",
            "#backupspectargets",
            "#backupexamplecomv1alpha1spec",
            "#backupexamplecomv1alpha1spectargets",
            "#backupexamplecomv1alpha1spectargets-1",
        ]
    );
    // The HTML page has the same anchors, and links to the same ones.
    let html = &files
        .iter()
        .find(|f| f.path == Path::new("backup.example.com_v1alpha1.html"))
        .unwrap()
        .contents;
    assert_eq!(attributes(html, "id"), ids);
    let hrefs: Vec<&str> = attributes(html, "href")
        .into_iter()
        .filter(|h| h.starts_with('#'))
        .collect();
    assert_eq!(hrefs, page.links);
}

#[test]
fn links_that_would_run_script_are_dropped() {
    use super::model::href;
    for script in [
        "javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        " \u{1}javascript:alert(1)",
        "\u{0}javascript:alert(1)",
        "java\tscript:alert(1)",
        "java\nscript:alert(1)",
        "vbscript:msgbox(1)",
        "DATA:text/html,<script>alert(1)</script>",
    ] {
        assert_eq!(href(script), None, "{script:?}");
    }
    assert_eq!(href("#backupspec").as_deref(), Some("#backupspec"));
    assert_eq!(
        href("a b(c)<d>\"e\"&.md").as_deref(),
        Some("a%20b%28c%29%3Cd%3E%22e%22%26.md")
    );
    // A page whose name would read as a script URL is linked by its file name.
    let mut crd = backup();
    crd["spec"]["group"] = json!("javascript:alert(1)//x");
    let files = pages(&[crd], COMMAND, Format::Both);
    let index = &rendered_markdown(&files)["index.md"];
    assert_eq!(
        index.links,
        ["javascript%3Aalert%281%29%2F%2Fx_v1alpha1.md"]
    );
    let html = &files
        .iter()
        .find(|f| f.path == Path::new("index.html"))
        .unwrap();
    assert!(
        html.contents
            .contains("<a href=\"javascript%3Aalert%281%29%2F%2Fx_v1alpha1.html\">"),
        "{}",
        html.contents
    );
}

#[test]
fn descriptions_keep_their_code_spans_and_nothing_else() {
    use super::model::{Span, prose};
    let text = |s: &str| Span::Text(s.to_owned());
    let code = |s: &str| Span::Code(s.to_owned());
    assert_eq!(
        prose("a `b` c ``d`e`` f ` g\n  *h*\n\n\n[i](j) `` k ``"),
        [
            vec![
                text("a "),
                code("b"),
                text(" c "),
                code("d`e"),
                text(" f ` g *h*")
            ],
            vec![text("[i](j) "), code("k")],
        ]
    );
    assert_eq!(prose(" \n\n "), Vec::<Vec<Span>>::new());
}
