#!/usr/bin/env python3
"""Dependency cycles between the source files of one folder: file A depends on file B when A includes B's
header or calls a function B defines. Prints every edge and every cycle; exits 1 if there is a cycle.
usage: tools/depcheck.py DIR [DIR...]   (e.g. common/src ode_plugin/src)"""
import os, re, sys

def scan(d):
    files = sorted(f for f in os.listdir(d) if f.endswith(('.c', '.cpp')))
    text = {}
    for f in files:
        src = open(os.path.join(d, f), encoding='utf-8', errors='replace').read()
        src = re.sub(r'/\*.*?\*/', ' ', src, flags=re.S)
        src = re.sub(r'//[^\n]*', ' ', src)
        src = re.sub(r'"(\\.|[^"\\])*"', '""', src)
        text[f] = src
    defined = {}
    for f, src in text.items():
        for m in re.finditer(r'^[A-Za-z_][\w \*]*?\b([A-Za-z_]\w*)\s*\([^;{]*\)\s*\{', src, flags=re.M):
            name = m.group(1)
            if name in ('if', 'for', 'while', 'switch', 'return'):
                continue
            if re.search(r'^static\b', m.group(0)):
                continue
            defined.setdefault(name, f)
    edges = {f: set() for f in files}
    for f, src in text.items():
        raw = open(os.path.join(d, f), encoding='utf-8', errors='replace').read()
        for h in re.findall(r'#include\s+"([\w.]+)\.h(?:pp)?"', raw):
            for ext in ('.c', '.cpp'):
                g = h + ext
                if g in edges and g != f:
                    edges[f].add(g)
        for name in set(re.findall(r'\b([A-Za-z_]\w*)\s*\(', src)):
            g = defined.get(name)
            if g and g != f:
                edges[f].add(g)
    return edges

def cycles(edges):
    found, state, stack = [], {}, []
    def visit(v):
        state[v] = 1
        stack.append(v)
        for w in sorted(edges[v]):
            if state.get(w) == 1:
                found.append(stack[stack.index(w):] + [w])
            elif not state.get(w):
                visit(w)
        stack.pop()
        state[v] = 2
    for v in sorted(edges):
        if not state.get(v):
            visit(v)
    return found

bad = 0
for d in sys.argv[1:]:
    edges = scan(d)
    print(f'{d}:')
    for f in sorted(edges):
        print(f'  {f} -> {", ".join(sorted(edges[f])) or "-"}')
    for c in cycles(edges):
        bad = 1
        print('  CYCLE: ' + ' -> '.join(c))
sys.exit(bad)
