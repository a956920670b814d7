/*
 * mdkpages: a valgrind tool that records, for each window of N executed
 * guest instructions, the set of 4096-byte pages the program touched
 * (instruction fetches and data accesses), and writes only that set.
 *
 * It is part of mdk (package collect) and is built by mdk on demand against
 * the valgrind installed on the machine (Debian's valgrind package ships the
 * static core libraries and headers a tool links with). mdk runs it as
 *
 *     VALGRIND_LIB=DIR valgrind -q --tool=mdkpages --mdk-window=N --mdk-fd=3 -- PROG ARGS
 *
 * Windows are counted exactly as mdk counts them in a lackey
 * --trace-mem=yes log: every instruction (IMark) is one instruction; window
 * k holds instructions k*N .. (k+1)*N-1 and the data accesses those
 * instructions make. An access of [addr, addr+size) touches every page its
 * bytes span. The events a superblock's instrumentation reports are the
 * ones lackey reports (loads, stores, guarded loads and stores, CAS, LL/SC
 * and dirty helpers' memory effects), reported at the same points: they
 * are queued, at most four at a time, and the queue is emptied when full,
 * before every side exit, before a load-linked and at the end of the
 * superblock. So an instruction that faults loses the queued events of its
 * superblock in both tools alike.
 *
 * Output on --mdk-fd, native byte order, 64-bit words:
 *
 *     magic "MDKPGS01"   page size (4096)   window length N
 *     per window:  P  I  page[0] .. page[P-1]
 *     at the end:  2^64-1  total instructions
 *
 * P is the number of distinct pages the window touched, in the order of
 * their first touch in the window; I is the instructions in the window (N
 * for all but the last). A stream without the end record was cut short.
 */

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"

#define PAGE_SHIFT 12

/* ---- options ---- */

static Long opt_window = 10000000;
static Long opt_fd = -1;

static Bool mp_option(const HChar* arg)
{
   if VG_BINT_CLO(arg, "--mdk-window", opt_window, 1, 0x7fffffffffffffffLL) {}
   else if VG_BINT_CLO(arg, "--mdk-fd", opt_fd, 0, 1 << 20) {}
   else
      return False;
   return True;
}

static void mp_usage(void)
{
   VG_(printf)(
"    --mdk-window=N     window length in executed instructions [10000000]\n"
"    --mdk-fd=FD        file descriptor to write the page sets to (required)\n");
}

static void mp_debug_usage(void)
{
   VG_(printf)("    (none)\n");
}

/* ---- the page table: page number -> window stamp ---- */

/* A slot is empty while its stamp is 0; stamps count windows from 1. */
typedef struct {
   Addr  page;
   ULong stamp;
} Slot;

static Slot* table;
static UWord table_mask;     /* capacity - 1; capacity is a power of two */
static UWord table_used;

static ULong stamp = 1;      /* window index + 1 */
static ULong in_window;      /* instructions in the current window */
static ULong total_instrs;

static ULong* win_pages;     /* the current window's pages, first touch order */
static UWord win_used, win_cap;

/* The last page each kind of access touched in this window. */
static Addr last_ipage = ~(Addr)0, last_dpage = ~(Addr)0;

/* Set when the output cannot be written, or in a forked child: only the
   process mdk started writes (a child that has not exec'ed yet still runs
   under valgrind with this tool's state, and would interleave its windows
   with the parent's). */
static Bool out_failed;

static inline UWord hash_page(Addr p)
{
   ULong h = (ULong)p * 0x9E3779B97F4A7C15ULL;
   return (UWord)(h >> 20);
}

static void table_grow(void)
{
   UWord old_cap = table_mask + 1, new_cap = old_cap * 2, i;
   Slot* old = table;
   table = VG_(calloc)("mdkpages.table", new_cap, sizeof(Slot));
   table_mask = new_cap - 1;
   for (i = 0; i < old_cap; i++) {
      if (old[i].stamp == 0)
         continue;
      UWord h = hash_page(old[i].page) & table_mask;
      while (table[h].stamp != 0)
         h = (h + 1) & table_mask;
      table[h] = old[i];
   }
   VG_(free)(old);
}

static void window_append(Addr page)
{
   if (win_used == win_cap) {
      win_cap *= 2;
      win_pages = VG_(realloc)("mdkpages.window", win_pages, win_cap * sizeof(ULong));
   }
   win_pages[win_used++] = page;
}

static void touch_page(Addr page)
{
   UWord h = hash_page(page) & table_mask;
   for (;;) {
      Slot* s = &table[h];
      if (s->stamp == 0) {
         s->page = page;
         s->stamp = stamp;
         window_append(page);
         if (++table_used * 2 > table_mask + 1)
            table_grow();
         return;
      }
      if (s->page == page) {
         if (s->stamp != stamp) {
            s->stamp = stamp;
            window_append(page);
         }
         return;
      }
      h = (h + 1) & table_mask;
   }
}

static inline void touch_range(Addr addr, UWord size, Addr* last)
{
   Addr first = addr >> PAGE_SHIFT;
   Addr end = addr + size - 1;
   if (end < addr)
      end = ~(Addr)0;
   Addr lastp = end >> PAGE_SHIFT;
   if (first == lastp) {
      if (first != *last) {
         touch_page(first);
         *last = first;
      }
      return;
   }
   for (Addr p = first;; p++) {
      touch_page(p);
      if (p == lastp)
         break;
   }
   *last = lastp;
}

/* ---- output ---- */

static void out_write(const void* buf, SizeT n)
{
   const UChar* b = buf;
   while (n > 0 && !out_failed) {
      Int chunk = n > (1 << 30) ? (1 << 30) : (Int)n;
      Int w = VG_(write)((Int)opt_fd, b, chunk);
      if (w <= 0) {
         /* The reader is gone; keep running the program, silently. */
         out_failed = True;
         return;
      }
      b += w;
      n -= w;
   }
}

static void close_window(void)
{
   ULong head[2] = { win_used, in_window };
   out_write(head, sizeof head);
   out_write(win_pages, win_used * sizeof(ULong));
   win_used = 0;
   in_window = 0;
   stamp++;
   last_ipage = last_dpage = ~(Addr)0;
}

/* ---- helpers called by instrumented code ---- */

static VG_REGPARM(2) void mp_instr(Addr addr, UWord len)
{
   if (UNLIKELY(in_window == (ULong)opt_window))
      close_window();
   in_window++;
   total_instrs++;
   touch_range(addr, len, &last_ipage);
}

static VG_REGPARM(2) void mp_data(Addr addr, UWord size)
{
   touch_range(addr, size, &last_dpage);
}

/* ---- instrumentation ---- */

typedef enum { EvInstr, EvRead, EvWrite, EvModify } EvKind;

typedef struct {
   EvKind  kind;
   IRExpr* addr;
   Int     size;
   IRExpr* guard; /* NULL: always */
} Ev;

#define QUEUE_MAX 4

static Ev queue[QUEUE_MAX];
static Int queued;

static void flush_queue(IRSB* sb)
{
   for (Int i = 0; i < queued; i++) {
      Ev* e = &queue[i];
      IRDirty* d;
      if (e->kind == EvInstr)
         d = unsafeIRDirty_0_N(2, "mp_instr", VG_(fnptr_to_fnentry)(mp_instr),
                               mkIRExprVec_2(e->addr, mkIRExpr_HWord(e->size)));
      else
         d = unsafeIRDirty_0_N(2, "mp_data", VG_(fnptr_to_fnentry)(mp_data),
                               mkIRExprVec_2(e->addr, mkIRExpr_HWord(e->size)));
      if (e->guard)
         d->guard = e->guard;
      addStmtToIRSB(sb, IRStmt_Dirty(d));
   }
   queued = 0;
}

static void enqueue(IRSB* sb, EvKind kind, IRExpr* addr, Int size, IRExpr* guard)
{
   /* A write right after an unguarded read of the same bytes is one
      read-modify-write access: it takes no place of its own. */
   if (kind == EvWrite && guard == NULL && queued > 0) {
      Ev* prev = &queue[queued - 1];
      if (prev->kind == EvRead && prev->guard == NULL && prev->size == size
          && eqIRAtom(prev->addr, addr)) {
         prev->kind = EvModify;
         return;
      }
   }
   if (queued == QUEUE_MAX)
      flush_queue(sb);
   queue[queued].kind = kind;
   queue[queued].addr = addr;
   queue[queued].size = size;
   queue[queued].guard = guard;
   queued++;
}

static IRSB* mp_instrument(VgCallbackClosure* closure, IRSB* in,
                           const VexGuestLayout* layout,
                           const VexGuestExtents* vge,
                           const VexArchInfo* archinfo_host,
                           IRType gWordTy, IRType hWordTy)
{
   IRTypeEnv* env = in->tyenv;
   IRSB* out;
   Int i = 0;

   if (gWordTy != hWordTy)
      VG_(tool_panic)("mdkpages: guest and host word sizes differ");

   out = deepCopyIRSBExceptStmts(in);
   for (; i < in->stmts_used && in->stmts[i]->tag != Ist_IMark; i++)
      addStmtToIRSB(out, in->stmts[i]);

   queued = 0;
   for (; i < in->stmts_used; i++) {
      IRStmt* st = in->stmts[i];
      if (st == NULL || st->tag == Ist_NoOp)
         continue;
      switch (st->tag) {
      case Ist_IMark:
         enqueue(out, EvInstr, mkIRExpr_HWord((HWord)st->Ist.IMark.addr),
                 st->Ist.IMark.len, NULL);
         break;
      case Ist_WrTmp: {
         IRExpr* e = st->Ist.WrTmp.data;
         if (e->tag == Iex_Load)
            enqueue(out, EvRead, e->Iex.Load.addr, sizeofIRType(e->Iex.Load.ty), NULL);
         break;
      }
      case Ist_Store:
         enqueue(out, EvWrite, st->Ist.Store.addr,
                 sizeofIRType(typeOfIRExpr(env, st->Ist.Store.data)), NULL);
         break;
      case Ist_StoreG: {
         IRStoreG* g = st->Ist.StoreG.details;
         enqueue(out, EvWrite, g->addr, sizeofIRType(typeOfIRExpr(env, g->data)), g->guard);
         break;
      }
      case Ist_LoadG: {
         IRLoadG* g = st->Ist.LoadG.details;
         IRType loaded = Ity_INVALID, widened = Ity_INVALID;
         typeOfIRLoadGOp(g->cvt, &widened, &loaded);
         enqueue(out, EvRead, g->addr, sizeofIRType(loaded), g->guard);
         break;
      }
      case Ist_Dirty: {
         IRDirty* d = st->Ist.Dirty.details;
         if (d->mFx == Ifx_Read || d->mFx == Ifx_Modify)
            enqueue(out, EvRead, d->mAddr, d->mSize, NULL);
         if (d->mFx == Ifx_Write || d->mFx == Ifx_Modify)
            enqueue(out, EvWrite, d->mAddr, d->mSize, NULL);
         break;
      }
      case Ist_CAS: {
         IRCAS* c = st->Ist.CAS.details;
         Int size = sizeofIRType(typeOfIRExpr(env, c->dataLo));
         if (c->dataHi != NULL)
            size *= 2;
         enqueue(out, EvRead, c->addr, size, NULL);
         enqueue(out, EvWrite, c->addr, size, NULL);
         break;
      }
      case Ist_LLSC:
         if (st->Ist.LLSC.storedata == NULL) {
            enqueue(out, EvRead, st->Ist.LLSC.addr,
                    sizeofIRType(typeOfIRTemp(env, st->Ist.LLSC.result)), NULL);
            flush_queue(out); /* nothing between the LL and its SC */
         } else {
            enqueue(out, EvWrite, st->Ist.LLSC.addr,
                    sizeofIRType(typeOfIRExpr(env, st->Ist.LLSC.storedata)), NULL);
         }
         break;
      case Ist_Exit:
         flush_queue(out);
         break;
      default:
         break;
      }
      addStmtToIRSB(out, st);
   }
   flush_queue(out);
   return out;
}

/* ---- start and end ---- */

static void mp_child_after_fork(ThreadId tid)
{
   out_failed = True;
}

static void mp_post_clo_init(void)
{
   if (opt_fd < 0) {
      VG_(fmsg_bad_option)("--mdk-fd", "mdkpages needs --mdk-fd=FD, the descriptor to write to\n");
   }
   table_mask = (1 << 16) - 1;
   table = VG_(calloc)("mdkpages.table", table_mask + 1, sizeof(Slot));
   win_cap = 1 << 12;
   win_pages = VG_(malloc)("mdkpages.window", win_cap * sizeof(ULong));
   ULong head[3];
   VG_(memcpy)(&head[0], "MDKPGS01", 8);
   head[1] = 1 << PAGE_SHIFT;
   head[2] = (ULong)opt_window;
   out_write(head, sizeof head);
   VG_(atfork)(NULL, NULL, mp_child_after_fork);
}

static void mp_fini(Int exitcode)
{
   if (in_window > 0 || win_used > 0)
      close_window();
   ULong tail[2] = { ~0ULL, total_instrs };
   out_write(tail, sizeof tail);
}

static void mp_pre_clo_init(void)
{
   VG_(details_name)("mdkpages");
   VG_(details_version)("1");
   VG_(details_description)("per-window page sets for mdk");
   VG_(details_copyright_author)("part of mdk, the Memory Designer's Kit");
   VG_(details_bug_reports_to)("the mdk issue tracker");
   VG_(details_avg_translation_sizeB)(275);
   VG_(basic_tool_funcs)(mp_post_clo_init, mp_instrument, mp_fini);
   VG_(needs_command_line_options)(mp_option, mp_usage, mp_debug_usage);
}

VG_DETERMINE_INTERFACE_VERSION(mp_pre_clo_init)
