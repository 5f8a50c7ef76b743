/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* One version for coschedd and coschedctl. */
#ifndef COSCHED_VERSION
#define COSCHED_VERSION "0.1"
#endif
