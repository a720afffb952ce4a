/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "caad/inventory.h"
#include "caad/plan.h"

/*
 * The actuator writes settings that differ from the host's, journals each
 * object's original value (durably, before the first write to it) and
 * restores them all on request, or from the journal after a crash.
 * Objects: IRQ affinities, rps_cpus, NAPI kthreads' affinities, RFS table
 * sizes (rps_flow_cnt, rps_sock_flow_entries), and ntuple rules, which it
 * inserts and deletes to match the plan's (see caad/ntuple.h; restoring
 * deletes exactly the rules caad inserted).
 */
struct caad_actuator;

struct caad_actuator_options {
	const char *sysroot;      /* NULL or "" for the host */
	const char *journal_path; /* e.g. /run/caad/journal */
	bool dry_run;             /* log what would change, write nothing */
	unsigned backoff_sec;     /* leave a value someone else changed alone this long; 0: until
	                           * caad_actuator_clear_backoff() (reload) */
};

int caad_actuator_new(const struct caad_actuator_options *opts, struct caad_actuator **ret);
void caad_actuator_free(struct caad_actuator *a);
static inline void caad_actuator_freep(struct caad_actuator **a)
{
	caad_actuator_free(*a);
}

/*
 * Apply a plan. Returns the number of values written (in dry-run: the
 * number of would-be changes announced for the first time), or a negative
 * errno for a failure that stopped it.
 *
 * Nothing is half-applied. Each value is one write(2) of the whole value,
 * journaled first; a refused write leaves the object as it was and takes
 * its journal entry back if it was new. A queue's settings (its IRQ or
 * kthread, then its RPS mask) go together: when one is refused, those of
 * the queue already written by this call are put back (unless the refused
 * object is gone: then nothing contradicts them) and the rest are skipped.
 * A refusal is logged once with its path and not tried again while the plan
 * wants the same value (see caad_actuator_wants() for what is re-read).
 */
int caad_actuator_apply(struct caad_actuator *a, const struct caad_inventory *inv, const struct caad_plan *plan);
/* Put back every original value this actuator changed and clear the journal. */
int caad_actuator_restore(struct caad_actuator *a);
/* The same for interface ifindex named ifname alone (its queues' RPS, RFS
 * and ntuple rules, its IRQs and NAPI kthreads): one no longer selected.
 * -EIO when some could not be, which stay journaled. */
int caad_actuator_restore_iface(struct caad_actuator *a, int ifindex, const char *ifname);
/* Whether the journal holds values of interface ifindex named ifname. */
bool caad_actuator_holds_iface(const struct caad_actuator *a, int ifindex, const char *ifname);
/* Restore what a journal left by an earlier run records (crash recovery).
 * With follow_renames (the journal is known to be of this boot: its
 * ifindexes name the same devices still), a line whose interface is
 * renamed since is restored under the name its ifindex has now; else it
 * is skipped as gone. Returns the number of values restored; 0 when there
 * is no journal. */
int caad_journal_restore(const char *journal_path, bool follow_renames);
/*
 * The runtime directory's journals (paths, n of them) belong to one boot
 * of the kernel, recorded in runtime_dir/boot_id. When that file names
 * another boot than boot_id_path (NULL: /proc/sys/kernel/random/boot_id)
 * does now, the host restarted since they were written: the reboot reset
 * everything they name, and a number (IRQ, PID, ifindex) may name another
 * object now, so they are removed (logged) instead of restored. Then the
 * current boot is recorded. Returns how many journals were removed, or
 * -errno (a journal or the record that cannot be removed or written). A
 * boot that cannot be told removes no journal: a record that is unreadable
 * or not a boot id is replaced, and when this boot's id cannot be read the
 * record is removed (a later start that can read it restores).
 * This is the host kernel's boot, also under a --sysroot (a fake tree has
 * no boot of its own). *ret_same_boot (may be NULL): whether the record
 * named this boot, so that the journals are known to be of it.
 */
int caad_journals_drop_other_boot(const char *runtime_dir, const char *boot_id_path, const char *const *journals,
                                  size_t n, bool *ret_same_boot);
/* Switch dry-run on or off (configuration reload). Turning it on restores
 * what was written so far. */
int caad_actuator_set_dry_run(struct caad_actuator *a, bool dry_run);
/* Where a planned setting stands now, for people (Explain). */
enum caad_setting_state {
	CAAD_SETTING_IN_PLACE,   /* the object reads the planned value */
	CAAD_SETTING_PENDING,    /* it reads otherwise: the next apply writes it */
	CAAD_SETTING_BACKED_OFF, /* someone else changed it after caad wrote it: left alone */
	CAAD_SETTING_REFUSED,    /* the kernel refused the value, or it could not be read */
	CAAD_SETTING_UNKNOWN,    /* not read back (ntuple rules, the RFS table, a kthread under a sysroot, gone) */
};
/*
 * Reads the object of setting s of inventory inv now (one file, or a
 * kthread's affinity) and tells where it stands; *ret_label (may be NULL)
 * gets its label ("eth0 rx-3: RPS CPUs"), free() it.
 */
enum caad_setting_state caad_actuator_setting_state(struct caad_actuator *a, const struct caad_inventory *inv,
                                                    const struct caad_setting *s, char **ret_label);

/* The flows whose ntuple rule the NIC refused, and that are not tried
 * again while planned (struct caad_policy's ntuple_refused): sorted, in a
 * new array in *ret (NULL when none), *ret_n of them. 0 or -ENOMEM. */
int caad_actuator_ntuple_refused(const struct caad_actuator *a, uint64_t **ret, size_t *ret_n);

/* Did the kernel refuse to move this IRQ (EIO/EPERM: managed)? Never tried again. */
bool caad_actuator_irq_unmovable(const struct caad_actuator *a, int irq);
/* The IRQ number's device is gone: another device's IRQ may take the
 * number, which is not known to be unmovable; its refused writes and
 * back-offs go too. */
void caad_actuator_forget_irq(struct caad_actuator *a, int irq);
/* CPUs where moving an IRQ failed with ENOSPC (no interrupt vectors left):
 * no IRQ is moved there again until caad_actuator_clear_backoff(); RPS and
 * kthreads may still use them. */
void caad_actuator_irq_exhausted(const struct caad_actuator *a, struct caad_cpumask *ret);

/*
 * What a refused write tells the daemon to read again before the next plan:
 * the topology after EINVAL/ERANGE/EOVERFLOW (an offline or invalid CPU;
 * the refused setting is tried again only after that, and once), the
 * inventory after ENOENT/ENODEV (an object went away) or a managed IRQ.
 */
enum {
	CAAD_ACTUATOR_WANT_TOPOLOGY = 1u << 0,
	CAAD_ACTUATOR_WANT_INVENTORY = 1u << 1,
};
unsigned caad_actuator_wants(const struct caad_actuator *a);
/* The daemon read these (CAAD_ACTUATOR_WANT_*) again: clear the wants; after
 * the topology, settings refused for an offline CPU may be tried once more. */
void caad_actuator_reread(struct caad_actuator *a, unsigned what);
/* Number of objects currently journaled. */
unsigned caad_actuator_n_changed(const struct caad_actuator *a);
/* The IRQs whose affinity caad holds (journaled) now, at most max of them
 * into ret: how many. */
size_t caad_actuator_held_irqs(const struct caad_actuator *a, int *ret, size_t max);

/* Why a read or write failed, from the kernel's errno (the classes of DESIGN.md). */
enum caad_error_class {
	CAAD_ERROR_MANAGED_IRQ,  /* EIO, EPERM: a kernel-managed or protected IRQ */
	CAAD_ERROR_OFFLINE_CPU,  /* EINVAL, ERANGE, EOVERFLOW: an offline or invalid CPU */
	CAAD_ERROR_NO_VECTORS,   /* ENOSPC: interrupt vectors exhausted on the target CPU */
	CAAD_ERROR_DEVICE_GONE,  /* ENOENT, ENODEV: the device or queue went away */
	CAAD_ERROR_OTHER,
	_CAAD_ERROR_CLASS_COUNT,
};

enum caad_error_class caad_error_class_from_errno(int r); /* r: -errno or errno */
/* "managed-irq", "offline-cpu", "no-vectors", "device-gone", "other" */
const char *caad_error_class_to_string(enum caad_error_class c);

struct caad_actuator_stats {
	uint64_t written;  /* values written by apply (restores not counted) */
	uint64_t restored; /* original values written back */
	uint64_t errors;   /* settings that could not be read or written (each refusal once), failed restores */
	uint64_t errors_by_class[_CAAD_ERROR_CLASS_COUNT]; /* the same errors by class */
	uint64_t backoffs; /* values someone else changed after caad wrote them */
	uint64_t undone;   /* values put back because another setting of their queue failed */
};

/*
 * Back-off: when a value caad wrote has been changed by someone else, caad
 * logs it, forgets its journal entry (the other writer owns the value now:
 * it is not overwritten on exit) and leaves it alone for backoff_sec, or
 * until this is called (reload, resume, mode set: an operator's go-ahead).
 * The go-ahead also forgets refused writes and CPUs without vectors, so
 * that they are tried again; managed IRQs stay unmovable.
 */
void caad_actuator_clear_backoff(struct caad_actuator *a);
/* BackOffSec= on reload: for back-offs that start from now on. */
void caad_actuator_set_backoff_sec(struct caad_actuator *a, unsigned sec);
/*
 * An ntuple rule is a flow's (by its tuple): what caad keeps of one (a
 * back-off, a refusal, a dry run's announcement) is forgotten once no plan
 * has wanted it for this long (default CAAD_NTUPLE_FORGET_SEC; 0: at the
 * first plan that does not), so that ended flows leave nothing behind.
 */
#define CAAD_NTUPLE_FORGET_SEC 600
void caad_actuator_set_ntuple_forget_sec(struct caad_actuator *a, unsigned sec);
/*
 * An interface went away, or came back as a new device (another ifindex):
 * what caad changed on the old one is gone with it. Forget those journal
 * entries and back-offs, so nothing stale is restored onto the new device.
 * Its IRQs' and NAPI kthreads' entries are kept as no interface's: they
 * are the host's, and outlive an interface moved to another network
 * namespace; exit puts each back if it still reads what caad wrote, and
 * a managed queue that meets one again adopts it if it does. With
 * may_return (a device of its own, a PCI function: one that is moved
 * between namespaces, and back, rather than made anew), so are its RPS,
 * RFS and ntuple entries, by ifindex: back with it, they are adopted, or
 * restored at exit; a device made anew under the name has another one.
 * Returns how many values were forgotten.
 */
int caad_actuator_forget_iface(struct caad_actuator *a, int ifindex, const char *ifname, bool may_return);
/*
 * The ifindex of a journal entry under the name ifname that is not
 * ifindex, or 0 if none: values caad changed on an interface that went
 * out of its view (down, not selected) and that has since been renamed
 * or re-created under that name. The caller asks what became of it.
 */
int caad_actuator_other_ifindex(const struct caad_actuator *a, const char *ifname, int ifindex);
/*
 * The name (in ret) under which the journal holds values of the interface
 * ifindex, where that is not ifname: 1, else 0. An interface renamed while
 * caad could not follow it (a configured name was missing, so no inventory
 * named it) and now back under a name caad manages: the caller renames
 * those entries (caad_actuator_rename_iface()) so exit restores them there.
 */
int caad_actuator_journaled_name(const struct caad_actuator *a, int ifindex, const char *ifname,
                                 char ret[static IF_NAMESIZE]);

/*
 * An interface was renamed (same ifindex): its values are still on the
 * device, under the new name. The journal entries of ifindex under `from`
 * (sysfs paths, ntuple rules, labels) now name `to`, so that they are
 * restored there; another interface's entries under `from` (names swapped
 * in one go) stay as they are. A name with control characters, which the
 * journal cannot hold, has them put back at once instead. Returns how many
 * entries were renamed, or -ENOMEM.
 */
int caad_actuator_rename_iface(struct caad_actuator *a, int ifindex, const char *from, const char *to);
/* Number of values caad is leaving alone now. */
unsigned caad_actuator_n_backed_off(const struct caad_actuator *a);

/* Totals since the actuator was made. */
void caad_actuator_get_stats(const struct caad_actuator *a, struct caad_actuator_stats *ret);
