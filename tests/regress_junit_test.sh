#!/bin/sh
# lcpkit regress --junit: the report validates against the JUnit schema (tests/junit.xsd, xmllint) and, read
# by an XML parser, holds one test case per problem file and solver with the outcome the text report gives:
# a regression a failure with its RES, budget and stop reasons, an unreadable file an error, a solver without
# golden results skipped; names that XML must escape and bytes that are not UTF-8 come out well-formed.
#
#   regress_junit_test.sh LCPKIT JUNIT_XSD PYTHON
set -eu
lcpkit=$1 xsd=$2 python=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lcpkit-junit.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
fail() { echo "regress_junit_test: $*" >&2; exit 1; }

dir=$tmp/regress
mkdir "$dir"
"$lcpkit" gen boxstack --n 4 --friction 0.5 --out "$dir/stack.lkp"
"$lcpkit" gen chain --n 6 --out "$dir/a&b<c>.lkp"
"$lcpkit" gen spherestack --n 5 --out "$dir/$(printf 'bad\377name').lkp"
"$lcpkit" regress "$dir" --solvers pgs,amgs --update >/dev/null
printf 'lcpkit-problem 1\nform rows\nbodies 2\n' >"$dir/truncated.lkp"

# pgs as it was, a worse pgs against pgs's golden results, and pgs-sm that has none
rc=0
"$lcpkit" regress "$dir" --solvers pgs,pgs@pgs:w=0.3,pgs-sm --junit "$tmp/report.xml" >"$tmp/report.txt" || rc=$?
[ "$rc" = 1 ] || { cat "$tmp/report.txt"; fail "regress exited with $rc, not 1 (a regression and an unreadable file)"; }
xmllint --noout --schema "$xsd" "$tmp/report.xml" || fail "the report is not JUnit XML (tests/junit.xsd)"

"$python" - "$tmp/report.xml" "$tmp/report.txt" <<'PY'
import sys
import xml.etree.ElementTree as ET

root = ET.parse(sys.argv[1]).getroot()
text = open(sys.argv[2], encoding="utf-8", errors="replace").read()
files = {"stack.lkp", "a&b<c>.lkp", "bad?name.lkp", "truncated.lkp"}
kinds = ("failure", "error", "skipped")

def check(cond, what):
    if not cond:
        sys.exit("regress_junit_test: " + what)

def outcome(case):
    found = [k for k in kinds if case.find(k) is not None]
    check(len(found) <= 1, f"{case.get('name')}: more than one outcome")
    return found[0] if found else "passed"

check(root.tag == "testsuites", "the root is not <testsuites>")
suites = {s.get("name"): s for s in root.findall("testsuite")}
check(list(suites) == ["pgs", "pgs@pgs:w=0.3", "pgs-sm"], f"suites {list(suites)}")
total = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
for name, suite in suites.items():
    cases = suite.findall("testcase")
    check(sorted(c.get("name") for c in cases) == sorted(files), f"{name}: cases {[c.get('name') for c in cases]}")
    counts = {"tests": len(cases), "failures": 0, "errors": 0, "skipped": 0}
    for c in cases:
        o = outcome(c)
        if o != "passed":
            counts[{"failure": "failures", "error": "errors", "skipped": "skipped"}[o]] += 1
        check(c.get("classname") == "regress." + name.replace(".", "_"), f"classname {c.get('classname')}")
    for k, v in counts.items():
        check(int(suite.get(k)) == v, f"{name}: {k}={suite.get(k)}, counted {v}")
        total[k] += v
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    check(props.get("budget_iterations") == "20" and props.get("tolerance") == "1e-06", f"properties {props}")
for k, v in total.items():
    check(int(root.get(k)) == v, f"testsuites {k}={root.get(k)}, counted {v}")

def case(suite, name):
    return next(c for c in suites[suite].findall("testcase") if c.get("name") == name)

for s in suites:  # the truncated file is an error everywhere, with the reader's file:line
    e = case(s, "truncated.lkp").find("error")
    check(e is not None and "unreadable" in e.get("message") and "truncated.lkp:" in e.get("message"),
          f"{s}: truncated.lkp is no error with the reader's message")
for n in files - {"truncated.lkp"}:
    check(outcome(case("pgs", n)) == "passed", f"pgs: {n} is not a pass")
    check("budget: 20 iterations, RES " in case("pgs", n).findtext("system-out"), f"pgs: {n} has no numbers")
    sk = case("pgs-sm", n).find("skipped")
    check(sk is not None and "no golden result" in sk.get("message"), f"pgs-sm: {n} is not skipped")
# the worse setting: every failure a regression with RES, the budget and both stop reasons, as the text says
fails = [case("pgs@pgs:w=0.3", n) for n in files - {"truncated.lkp"}]
fails = [c for c in fails if outcome(c) == "failure"]
check(fails, "the under-relaxed pgs has no failure")
check(len(fails) == text.count("REGRESSION"), "failures and the text's regressions differ")
for c in fails:
    f = c.find("failure")
    m = f.get("message")
    check(f.get("type") == "regression" and m.startswith("REGRESSION: "), f"failure message {m!r}")
    for part in ("after the budget of 20 iterations", "stopped: iterations", "to RES < 1e-06"):
        check(part in m, f"failure message without {part!r}: {m!r}")
    check("solver pgs:w=0.3 (golden results of pgs)" in f.text, f"failure text {f.text!r}")
    res = float(m.split("; RES ")[1].split()[0])
    check(res > 0 and f"{res:.3e}" in text, f"the failure's RES {res} is not the text report's")
print(f"regress_junit_test: {total['tests']} cases, {total['failures']} failures, {total['errors']} errors, "
      f"{total['skipped']} skipped, as the text report")
PY
