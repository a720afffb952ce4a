/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdio.h>

/* Write s as a JSON string literal (quoted, escaped) to f. NULL -> null. */
void caad_json_string(FILE *f, const char *s);
