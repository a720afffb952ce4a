// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bench/observer's reference: programs that do nothing, on the tracepoints
 * where caad's observer runs. What the kernel's BPF statistics give them
 * per event is what any program costs there on this machine (the
 * statistics' own clock reads included), against which caad's programs'
 * own work can be read. Not part of caad: bench/floor loads them.
 */
#include "vmlinux.h"

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

SEC("tp_btf/sock_recv_length")
int BPF_PROG(floor_sock_recv_length, struct sock *sk, int ret, int flags)
{
	return 0;
}

SEC("tp_btf/sk_data_ready")
int BPF_PROG(floor_sk_data_ready, const struct sock *sk)
{
	return 0;
}

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(floor_inet_sock_set_state, const struct sock *sk, const int oldstate, const int newstate)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
