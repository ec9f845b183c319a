"""A page as a list of blocks, written out twice from the one list: as Markdown that GitHub shows
and as one self-contained HTML file (its CSS inline, its charts embedded as base64 PNG). The
report says what it says once; only the writing differs.

Text is a string or a list of fragments: plain str, Code (commands, kernel names, paths),
Verdict (a verdict word, coloured in the HTML) and Folded (a long message a table cell shows
short, numbered, with the whole text under the table). Blocks: Heading, Paragraph, Bullets,
Table, CodeBlock, Chart."""
import base64
import html
import io
import os
import re


class Code(str):
    """Text shown as code: commands, kernel names, paths."""


class Verdict(str):
    """A verdict word (faster, slower, same, too noisy to tell), coloured in the HTML."""


class Strong(str):
    """Text a reader's eye should find first: a family's name before its verdict."""


class Folded(str):
    """A table cell's long message, shown short: the cell says Folded's text and a number, [1],
    and the whole text (.full) comes under the table with that number (in HTML also as the
    cell's tooltip). A table numbers its Folded cells itself (table_notes), in the order they
    come; cells of one text share a number."""

    def __new__(cls, short, full):
        folded = super().__new__(cls, short)
        folded.full = full
        return folded


class Heading:
    def __init__(self, level, text, anchor=None):
        self.level, self.text, self.anchor = level, text, anchor


class Paragraph:
    def __init__(self, text):
        self.text = text


class Bullets:
    def __init__(self, items):
        self.items = list(items)


class Table:
    """header: texts; rows: lists of texts; right: the indexes of columns of numbers; prose: the
    cells are long text (paths, URLs, explanations) that the HTML may break anywhere, so that the
    table fits the page's width instead of scrolling."""

    def __init__(self, header, rows, right=(), prose=False):
        self.header, self.rows, self.right, self.prose = header, rows, set(right), prose


class Details:
    """Blocks folded under a one-line summary (HTML's <details>, which GitHub's Markdown shows as
    well): what a reader opens when the page's first screen is not enough."""
    def __init__(self, summary, blocks):
        self.summary, self.blocks = summary, list(blocks)


class CodeBlock:
    def __init__(self, text):
        self.text = text


class Chart:
    """A PNG on disk: the Markdown links it (relative to the page), the HTML embeds its bytes."""

    def __init__(self, path, alt):
        self.path, self.alt = path, alt


def fragments(text):
    return [text] if isinstance(text, str) else list(text)


def table_notes(table):
    """{whole text: its number} of the table's Folded cells, numbered from 1 in the order they come."""
    numbers = {}
    for row in table.rows:
        for cell in row:
            for part in fragments(cell):
                if isinstance(part, Folded):
                    numbers.setdefault(part.full, len(numbers) + 1)
    return numbers


# --- Markdown --------------------------------------------------------------------------------------

# What GitHub's Markdown would read as markup in running text: escaped, so a name stays a name.
# (`<` only where a tag could start, `[` only where a link could: "p < 0.05" and "[a.json]" stay
# as they are.)
_MD_SPECIAL = re.compile(r"[\\`*]|\[(?=[^\]]*\]\()|<(?=[A-Za-z/!?])|(?<!\w)_|_(?!\w)")


def md_escape(text, in_table=False):
    out = _MD_SPECIAL.sub(lambda m: "\\" + m.group(0)[0], text)
    return out.replace("|", "\\|") if in_table else out


def md_code(text, in_table=False):
    fence = "``" if "`" in text else "`"
    pad = " " if fence == "``" else ""
    out = f"{fence}{pad}{text}{pad}{fence}"
    return out.replace("|", "\\|") if in_table else out


def md_text(text, in_table=False, notes=None):
    """notes: {whole text: number} of the table the text is a cell of (table_notes)."""
    out = []
    for part in fragments(text):
        if isinstance(part, Folded):
            out.append(md_escape(f"{part} [{notes[part.full]}]", in_table))
        elif isinstance(part, Code):
            out.append(md_code(part, in_table))
        elif isinstance(part, Strong):
            out.append(f"**{md_escape(part, in_table)}**")
        else:
            out.append(md_escape(part, in_table))
    return "".join(out).replace("\n", " ")


def md_table(table):
    """The table, then each folded message whole, a paragraph each: "[1] svd/gesvdp/...: ..."."""
    notes = table_notes(table)

    def line(cells):
        return "| " + " | ".join(md_text(c, in_table=True, notes=notes) for c in cells) + " |"
    rule = "|" + "|".join("---:" if i in table.right else "---" for i in range(len(table.header))) + "|"
    lines = "\n".join([line(table.header), rule] + [line(row) for row in table.rows])
    return "\n\n".join([lines] + [md_escape(f"[{n}] {full}").replace("\n", " ") for full, n in notes.items()])


def markdown(blocks, page_dir):
    """The page as Markdown; charts are linked relative to page_dir, where the page is written."""
    out = []
    for block in blocks:
        if isinstance(block, Details):
            out.append(f"<details><summary>{html.escape(block.summary)}</summary>\n\n"
                       + markdown(block.blocks, page_dir).rstrip("\n") + "\n\n</details>")
        elif isinstance(block, Heading):
            anchor = f'<a id="{block.anchor}"></a>\n' if block.anchor else ""
            out.append(f"{anchor}{'#' * block.level} {md_text(block.text)}")
        elif isinstance(block, Paragraph):
            out.append(md_text(block.text))
        elif isinstance(block, Bullets):
            out.append("\n".join(f"- {md_text(item)}" for item in block.items))
        elif isinstance(block, Table):
            out.append(md_table(block))
        elif isinstance(block, CodeBlock):
            fence = "````" if "```" in block.text else "```"
            out.append(f"{fence}text\n{block.text}\n{fence}")
        elif isinstance(block, Chart):
            link = os.path.relpath(block.path, page_dir).replace(os.sep, "/")
            out.append(f"![{md_escape(block.alt)}]({link})")
    return "\n\n".join(out) + "\n"


# --- HTML ----------------------------------------------------------------------------------------

STYLE = """
body { font: 15px/1.45 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #1f2328;
       max-width: 1100px; margin: 2em auto; padding: 0 1em; }
h1 { font-size: 1.7em; border-bottom: 1px solid #d0d7de; padding-bottom: .3em; }
h2 { font-size: 1.35em; border-bottom: 1px solid #d0d7de; padding-bottom: .25em; margin-top: 1.8em; }
h3 { font-size: 1.1em; margin-top: 1.4em; }
table { border-collapse: collapse; margin: .6em 0 1em; font-size: 13px; display: block; overflow-x: auto; }
th, td { border: 1px solid #d0d7de; padding: 3px 8px; vertical-align: top; }
th { background: #f6f8fa; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
code, pre { font: 12.5px SFMono-Regular, Consolas, "Liberation Mono", Menlo, monospace;
            background: #f6f8fa; border-radius: 4px; }
code { padding: 1px 4px; overflow-wrap: anywhere; }
td:first-child code { white-space: nowrap; }
pre { padding: 8px 12px; overflow-x: auto; white-space: pre-wrap; word-break: break-all; }
img { max-width: 100%; box-sizing: border-box; border: 1px solid #d0d7de; margin: .4em 0; }
.faster { color: #1a7f37; font-weight: 600; }
.slower { color: #cf222e; font-weight: 600; }
.noisy { color: #9a6700; }
.same { color: #57606a; }
.folded { white-space: normal; text-decoration: underline dotted #8c959f; cursor: help; }
table.prose td { overflow-wrap: anywhere; }
table.prose td:last-child { min-width: 16em; }
details { margin: .5em 0; border: 1px solid #d0d7de; border-radius: 6px; padding: .3em .8em; }
summary { cursor: pointer; font-weight: 600; font-size: 1.1em; }
p.note { font-size: 12.5px; color: #57606a; margin: -.5em 0 .6em; overflow-wrap: anywhere; }
"""

_VERDICT_CLASS = {"faster": "faster", "slower": "slower", "same": "same", "too noisy to tell": "noisy"}


def html_text(text, notes=None):
    """notes: {whole text: number} of the table the text is a cell of (table_notes)."""
    out = []
    for part in fragments(text):
        escaped = html.escape(part)
        if isinstance(part, Folded):
            out.append(f'<span class="folded" title="{html.escape(part.full)}">{escaped} '
                       f'[{notes[part.full]}]</span>')
        elif isinstance(part, Code):
            out.append(f"<code>{escaped}</code>")
        elif isinstance(part, Strong):
            out.append(f"<strong>{escaped}</strong>")
        elif isinstance(part, Verdict):
            word = re.sub(r"[ ,!(].*$", "", part) if not part.startswith("too noisy") else "too noisy to tell"
            cls = _VERDICT_CLASS.get(word)
            out.append(f'<span class="{cls}">{escaped}</span>' if cls else escaped)
        else:
            out.append(escaped)
    return "".join(out)


def html_table(table):
    """The table, then each folded message whole under it, a paragraph each."""
    notes = table_notes(table)
    head = "".join(f"<th>{html_text(c)}</th>" for c in table.header)
    body = []
    for row in table.rows:
        cells = "".join(f'<td class="num">{html_text(c, notes)}</td>' if i in table.right
                        else f"<td>{html_text(c, notes)}</td>" for i, c in enumerate(row))
        body.append(f"<tr>{cells}</tr>")
    under = "".join(f'\n<p class="note">[{n}] {html.escape(full)}</p>' for full, n in notes.items())
    opening = '<table class="prose">' if table.prose else "<table>"
    return (f"{opening}\n<thead><tr>{head}</tr></thead>\n<tbody>\n" + "\n".join(body) + "\n</tbody>\n</table>"
            + under)


def compact_png(path):
    """The chart's PNG in 256 colours: a chart has a few colours and their anti-aliasing, so it
    looks the same at about a third of the bytes, and a page of many charts stays one that can be
    mailed. The bytes as drawn where Pillow (matplotlib's own dependency) is not there."""
    with open(path, "rb") as f:
        drawn = f.read()
    try:
        from PIL import Image
    except ImportError:
        return drawn
    out = io.BytesIO()
    Image.open(io.BytesIO(drawn)).convert("RGB").quantize(colors=256).save(out, "PNG", optimize=True)
    return out.getvalue() if out.tell() < len(drawn) else drawn


def embedded_png(path):
    return "data:image/png;base64," + base64.b64encode(compact_png(path)).decode("ascii")


def html_page(blocks, title):
    """One HTML file that needs nothing else: no stylesheet, script, font or image outside it.
    Every element is closed (void ones as <x/>), so that an XML parser reads it too."""
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
            f"<title>{html.escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
            + html_blocks(blocks) + "\n</body>\n</html>\n")


def html_blocks(blocks):
    out = []
    for block in blocks:
        if isinstance(block, Details):
            out.append(f"<details><summary>{html.escape(block.summary)}</summary>\n"
                       + html_blocks(block.blocks) + "\n</details>")
        elif isinstance(block, Heading):
            anchor = f' id="{html.escape(block.anchor)}"' if block.anchor else ""
            out.append(f"<h{block.level}{anchor}>{html_text(block.text)}</h{block.level}>")
        elif isinstance(block, Paragraph):
            out.append(f"<p>{html_text(block.text)}</p>")
        elif isinstance(block, Bullets):
            out.append("<ul>\n" + "\n".join(f"<li>{html_text(i)}</li>" for i in block.items) + "\n</ul>")
        elif isinstance(block, Table):
            out.append(html_table(block))
        elif isinstance(block, CodeBlock):
            out.append(f"<pre>{html.escape(block.text)}</pre>")
        elif isinstance(block, Chart):
            out.append(f'<p><img src="{embedded_png(block.path)}" alt="{html.escape(block.alt)}"/></p>')
    return "\n".join(out)
