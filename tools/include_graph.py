#!/usr/bin/env python3
"""The include graph of the project's modules, and its cycles.

A module is a .c file and the .h file of the same stem in the same folder
(src/daemon/server.c and src/daemon/server.h are the module daemon/server);
a header alone (src/daemon/daemon.h) or a source alone (src/daemon/main.c)
is a module too, and a header STEM_internal.h (the inside of a module
whose files share it, src/xal/xal_opencl_internal.h) belongs to module
STEM. Module A depends on module B when a file of A includes a
header of B with `#include "..."`, the path written as the project writes
it, relative to src/ ("daemon/server.h"), or relative to the including
file's folder. Only the modules under the folders given are nodes:
includes of anything else (base/, ipc/, system headers) are left out.

The design rule it checks (docs/architecture.md, issue 32): within a part,
the modules form a graph without cycles, so each can be read, tested and
changed knowing only what is below it. Every strongly connected component
of more than one module is a cycle and is printed with the edges inside it.

Usage: tools/include_graph.py [--dot] DIR...
  prints the edges ("a -> b"), then every cycle; with --dot, the graph in
  Graphviz's language instead (the modules of a cycle in red).
Exit status: 0 no cycle, 1 a cycle, 2 a usage error (a folder that does
not exist). Standard library only.
"""

import argparse
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def src_root(folder):
    """The folder include paths are relative to: the nearest `src` above
    @folder (src/daemon -> src), else @folder's parent."""
    path = os.path.abspath(folder)
    probe = path
    while True:
        if os.path.basename(probe) == 'src':
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return os.path.dirname(path)
        probe = parent


def collect(folders):
    """{file path: module name} for every .c and .h under @folders, and the
    roots include paths are resolved against."""
    files, roots = {}, []
    for folder in folders:
        root = src_root(folder)
        if root not in roots:
            roots.append(root)
        for base, dirs, names in os.walk(folder):
            dirs.sort()
            for name in sorted(names):
                stem, ext = os.path.splitext(name)
                if ext not in ('.c', '.h'):
                    continue
                # A part's internal header belongs to the module it is
                # the inside of (xal_opencl_internal.h: xal_opencl).
                if ext == '.h' and stem.endswith('_internal'):
                    stem = stem[:-len('_internal')]
                path = os.path.abspath(os.path.join(base, name))
                module = os.path.relpath(os.path.join(os.path.abspath(base), stem), root)
                files[path] = module.replace(os.sep, '/')
    return files, roots


def resolve(including, target, roots, files):
    """The file @including means by `#include "@target"`, if it is one of
    @files: next to the including file first, as the preprocessor looks."""
    for base in [os.path.dirname(including)] + roots:
        path = os.path.normpath(os.path.join(base, target))
        if path in files:
            return path
    return None


def edges_of(files, roots):
    """{module: set of modules it includes}, every module a key."""
    graph = {m: set() for m in files.values()}
    for path, module in files.items():
        with open(path, encoding='utf-8', errors='replace') as f:
            for line in f:
                m = INCLUDE.match(line)
                if not m:
                    continue
                dep = resolve(path, m.group(1), roots, files)
                if dep and files[dep] != module:
                    graph[module].add(files[dep])
    return graph


def cycles_of(graph):
    """The strongly connected components of more than one module (Tarjan,
    iterative: no recursion limit on long chains), each sorted."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return sorted(out)


def print_text(graph, cycles):
    for module in sorted(graph):
        for dep in sorted(graph[module]):
            print(f'{module} -> {dep}')
    for component in cycles:
        members = set(component)
        print(f'cycle ({len(component)} modules): {", ".join(component)}')
        for module in component:
            for dep in sorted(graph[module] & members):
                print(f'  {module} -> {dep}')
    if not cycles:
        print(f'no cycle among {len(graph)} modules')


def print_dot(graph, cycles):
    in_cycle = {m for component in cycles for m in component}
    print('digraph includes {')
    print('  node [shape=box, fontname="monospace"];')
    for module in sorted(graph):
        colour = ', color=red, fontcolor=red' if module in in_cycle else ''
        print(f'  "{module}" [label="{module}"{colour}];')
    for module in sorted(graph):
        for dep in sorted(graph[module]):
            red = ' [color=red]' if module in in_cycle and dep in in_cycle else ''
            print(f'  "{module}" -> "{dep}"{red};')
    print('}')


def main(argv):
    parser = argparse.ArgumentParser(
        description='The include graph of the modules under DIR..., and its cycles '
                    '(exit 1 if there is one).')
    parser.add_argument('--dot', action='store_true', help='print Graphviz instead of edges')
    parser.add_argument('dirs', nargs='+', metavar='DIR')
    args = parser.parse_args(argv)
    for folder in args.dirs:
        if not os.path.isdir(folder):
            print(f'include_graph.py: {folder}: not a folder', file=sys.stderr)
            return 2
    files, roots = collect(args.dirs)
    graph = edges_of(files, roots)
    cycles = cycles_of(graph)
    if args.dot:
        print_dot(graph, cycles)
    else:
        print_text(graph, cycles)
    return 1 if cycles else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
