#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""check-skeletons.py A.skel.h B.skel.h STAMP

caad opens the observer without kfuncs through the observer's skeleton,
giving it the other object's bytes (src/lib/observe.c): that holds only
while both objects have the same programs, maps and global variables, in
the same order, of the same types. So the two skeletons must be the same
text once their names are one and their embedded objects are left out.
Writes STAMP when they are; else says where they differ and fails.
"""
import difflib
import re
import sys


def shape(path):
    text = open(path, encoding='utf-8').read()
    name = re.search(r'^struct (\w+) \{', text, re.M).group(1)
    text = text.replace(name, 'SKEL').replace(name.upper(), 'SKEL')
    # the embedded object: the size and the string that holds its bytes
    text = re.sub(r'\*sz = \d+;', '*sz = N;', text)
    text = re.sub(r'return \(const void \*\)"\\\n(?:.*\\\n)*?.*";', 'return (const void *)"";', text)
    return text.splitlines(keepends=True)


def main():
    a, b, stamp = sys.argv[1:4]
    sa, sb = shape(a), shape(b)
    if sa != sb:
        sys.stderr.writelines(difflib.unified_diff(sa, sb, a, b, n=2))
        sys.stderr.write('%s and %s differ beyond their bytes: the observer without kfuncs cannot be '
                         'opened through the observer\'s skeleton\n' % (a, b))
        return 1
    open(stamp, 'w').write('alike\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
