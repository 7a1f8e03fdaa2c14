"""OpenMP parallel regions with a serial branch: ``with_serial_branches(source)`` rewrites each

    #pragma omp parallel for ... if(COND) ...
    <statement>

of a C source into

    if (COND) {
    #pragma omp parallel for ...          (the same clauses, without the if)
    <statement>
    } else {
    #pragma omp simd                      (where the region was "for simd")
    <statement>
    }

and each ``_Pragma("omp parallel ... if(COND) ...") <statement>`` of a macro's body into the same on
the macro's lines, with ``_Pragma`` operators.

libgomp enters a parallel region whose if() clause is false (a team of one thread) for several hundred ns
a call (BENCHMARKS.md, "OpenMP regions on one thread"): more than the loop itself on the small
arrays the compiled functions take. The serial branch runs the same statement on the calling
thread, as the team of one did. Regions whose clauses make their variables private or reduce into
them (the serial statement would write the shared ones), and statements this reader does not
follow, are left as they are.
"""
import functools
import re

__all__ = ["with_serial_branches"]

_PRAGMA = re.compile(r"^([ \t]*)#pragma omp parallel\b(.*)$", re.MULTILINE)
_MACRO_PRAGMA = re.compile(r'_Pragma\("omp parallel\b([^"]*)"\)')
_KEPT_PRIVATE = re.compile(r"\b(reduction|private|firstprivate|lastprivate|copyin|ordered)\b")


@functools.lru_cache(maxsize=64)   # (a source's functions are loaded one by one, each from the whole source)
def with_serial_branches(source):
    """``source`` with a serial branch beside each parallel region that has an if() clause."""
    pieces, at = [], 0
    matches = sorted([(m, _rewritten) for m in _PRAGMA.finditer(source)]
                     + [(m, _macro_rewritten) for m in _MACRO_PRAGMA.finditer(source)],
                     key=lambda found: found[0].start())
    for match, rewrite in matches:
        if match.start() < at:   # (a region inside a statement rewritten already)
            continue
        rewritten = rewrite(source, match)
        if rewritten is None:
            continue
        text, end = rewritten
        pieces += [source[at:match.start()], text]
        at = end
    return "".join(pieces) + source[at:]


def _rewritten(source, match):
    """(the region with its serial branch, where it ends in ``source``), or None."""
    indent, clauses = match.group(1), match.group(2)
    condition = _if_clause(clauses)
    if condition is None or _KEPT_PRIVATE.search(clauses) or clauses.rstrip().endswith("\\"):
        return None
    start = match.end() + 1
    end = _statement_end(source, _skip_space(source, start))
    if end is None:
        return None
    statement = source[start:end]
    words = clauses.replace(condition[0], " ").split()
    parallel = f"{indent}#pragma omp parallel {' '.join(words)}\n"
    serial = f"{indent}#pragma omp simd\n" if words[:2] == ["for", "simd"] else ""
    text = (f"{indent}if ({condition[1]}) {{\n{parallel}{statement}\n{indent}}} else {{\n{serial}{statement}\n"
            f"{indent}}}")
    return text, end


def _macro_rewritten(source, match):
    """(a macro's region with its serial branch, on the region's lines, where it ends in ``source``), or
    None."""
    clauses = match.group(1)
    condition = _if_clause(clauses)
    if condition is None or _KEPT_PRIVATE.search(clauses):
        return None
    start = _skip_space(source, match.end())
    end = _statement_end(source, start)
    if end is None:
        return None
    statement = source[start:end]
    words = clauses.replace(condition[0], " ").split()
    serial = '_Pragma("omp simd") ' if words[:2] == ["for", "simd"] else ""
    text = (f'if ({condition[1]}) {{ _Pragma("omp parallel {" ".join(words)}") {statement} }} '
            f'else {{ {serial}{statement} }}')
    return text, end


def _if_clause(clauses):
    """(the if() clause's text, its condition) of a pragma's clauses, or None."""
    found = re.search(r"\bif\s*\(", clauses)
    if found is None:
        return None
    close = _matching(clauses, found.end() - 1, "(", ")")
    if close is None:
        return None
    condition = clauses[found.end():close]
    condition = re.sub(r"^\s*parallel\s*:", "", condition)
    return clauses[found.start():close + 1], condition.strip()


def _skip_space(text, i):
    while i < len(text):
        if text[i].isspace():
            i += 1
        elif text.startswith("\\\n", i):   # (a macro's line continued)
            i += 2
        elif text.startswith("/*", i):
            close = text.find("*/", i + 2)
            if close < 0:
                return len(text)
            i = close + 2
        elif text.startswith("//", i):
            close = text.find("\n", i)
            i = len(text) if close < 0 else close + 1
        else:
            return i
    return i


def _matching(text, i, opening, closing):
    """The index of the bracket closing the one at ``i`` (comments and literals skipped), or None."""
    depth = 0
    while i < len(text):
        c = text[i]
        if text.startswith("/*", i):
            close = text.find("*/", i + 2)
            if close < 0:
                return None
            i = close + 2
            continue
        if text.startswith("//", i):
            close = text.find("\n", i)
            if close < 0:
                return None
            i = close + 1
            continue
        if c in "\"'":
            j = i + 1
            while j < len(text) and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if c == opening:
            depth += 1
        elif c == closing:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None


def _statement_end(text, i):
    """Where the C statement starting at ``i`` ends (one past its last character), or None where it is
    not one this reader follows: a block, a for or while loop, an if (with its else), or an expression
    statement."""
    if i >= len(text):
        return None
    if text[i] == "{":
        close = _matching(text, i, "{", "}")
        return None if close is None else close + 1
    keyword = re.match(r"(for|while|if)\b", text[i:])
    if keyword:
        opening = _skip_space(text, i + len(keyword.group(1)))
        if opening >= len(text) or text[opening] != "(":
            return None
        close = _matching(text, opening, "(", ")")
        if close is None:
            return None
        end = _statement_end(text, _skip_space(text, close + 1))
        if end is not None and keyword.group(1) == "if":
            after = _skip_space(text, end)
            if re.match(r"else\b", text[after:]):
                end = _statement_end(text, _skip_space(text, after + 4))
        return end
    if text[i] == "#":   # (a pragma before the statement: the statement it applies to follows)
        line_end = text.find("\n", i)
        return None if line_end < 0 else _statement_end(text, _skip_space(text, line_end + 1))
    if text.startswith("_Pragma", i):   # (a macro's pragma before the statement)
        opening = _skip_space(text, i + len("_Pragma"))
        close = _matching(text, opening, "(", ")") if opening < len(text) and text[opening] == "(" else None
        return None if close is None else _statement_end(text, _skip_space(text, close + 1))
    depth = 0
    while i < len(text):
        c = text[i]
        if c in "{}":
            return None
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == ";" and depth == 0:
            return i + 1
        i += 1
    return None
