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
static ULong total_instrs;

static ULong* win_pages;     /* the current window's pages, first touch order */
static UWord win_used, win_cap;

/* A direct-mapped cache of pages known to be in the current window's set:
   seen[p % SEEN] == p only if page p was touched in this window. The
   instrumented code looks here first and calls a helper only on a miss;
   skipping a page already in the set changes neither the set nor the
   order of first touches. Emptied (all ones) when a window closes. */
#define SEEN 256

/* What the instrumented code reads and writes inline, in one block so that
   the window-closing call can declare it rewrites all of it. */
static struct {
   ULong in_window;          /* instructions in the current window */
   Addr  seen[SEEN];
} hot;
#define in_window hot.in_window
#define seen hot.seen

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

static void touch_range(Addr addr, UWord size)
{
   Addr first = addr >> PAGE_SHIFT;
   Addr end = addr + size - 1;
   if (end < addr)
      end = ~(Addr)0;
   Addr last = end >> PAGE_SHIFT;
   for (Addr p = first;; p++) {
      if (seen[p % SEEN] != p) {
         touch_page(p);
         seen[p % SEEN] = p;
      }
      if (p == last)
         break;
   }
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
   total_instrs += in_window;
   win_used = 0;
   in_window = 0;
   stamp++;
   VG_(memset)(seen, 0xff, sizeof seen);
}

/* ---- helpers called by instrumented code ---- */

/* The instrumentation counts instructions inline (in_window) and calls
   these only when there is something to do: a window to close, or a page
   the seen cache does not hold. */

static void mp_close_window(void)
{
   close_window();
}

static VG_REGPARM(2) void mp_access(Addr addr, UWord size)
{
   touch_range(addr, size);
}

/* ---- instrumentation ---- */

typedef enum { EvInstr, EvRead, EvWrite, EvModify } EvKind;

typedef struct {
   EvKind  kind;
   IRExpr* addr;  /* data accesses */
   Addr    iaddr; /* instructions */
   Int     size;
   IRExpr* guard; /* NULL: always */
} Ev;

#define QUEUE_MAX 4

static Ev queue[QUEUE_MAX];
static Int queued;

static IRExpr* tmp(IRSB* sb, IRType ty, IRExpr* e)
{
   IRTemp t = newIRTemp(sb->tyenv, ty);
   addStmtToIRSB(sb, IRStmt_WrTmp(t, e));
   return IRExpr_RdTmp(t);
}

static IRExpr* u64(ULong v)
{
   return IRExpr_Const(IRConst_U64(v));
}

static IRExpr* load64(IRSB* sb, void* p)
{
   return tmp(sb, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, mkIRExpr_HWord((HWord)p)));
}

/* An access of size bytes at addr (an atom): call the helper unless the
   access lies within one page that the seen cache holds. */
static void emit_access(IRSB* sb, IRExpr* addr, Int size, IRExpr* guard)
{
   IRDirty* d = unsafeIRDirty_0_N(2, "mp_access", VG_(fnptr_to_fnentry)(mp_access),
                                  mkIRExprVec_2(addr, mkIRExpr_HWord(size)));
   if (guard != NULL) {
      /* Guarded accesses (rare) always call. */
      d->guard = guard;
      addStmtToIRSB(sb, IRStmt_Dirty(d));
      return;
   }
   IRExpr* shift = IRExpr_Const(IRConst_U8(PAGE_SHIFT));
   IRExpr* page = tmp(sb, Ity_I64, IRExpr_Binop(Iop_Shr64, addr, shift));
   IRExpr* end = tmp(sb, Ity_I64, IRExpr_Binop(Iop_Add64, addr, u64((ULong)(size - 1))));
   IRExpr* endpage = tmp(sb, Ity_I64, IRExpr_Binop(Iop_Shr64, end, shift));
   IRExpr* index = tmp(sb, Ity_I64, IRExpr_Binop(Iop_And64, page, u64(SEEN - 1)));
   IRExpr* offset = tmp(sb, Ity_I64, IRExpr_Binop(Iop_Shl64, index, IRExpr_Const(IRConst_U8(3))));
   IRExpr* slot = tmp(sb, Ity_I64, IRExpr_Binop(Iop_Add64, mkIRExpr_HWord((HWord)seen), offset));
   IRExpr* cached = tmp(sb, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, slot));
   IRExpr* x1 = tmp(sb, Ity_I64, IRExpr_Binop(Iop_Xor64, page, cached));
   IRExpr* x2 = tmp(sb, Ity_I64, IRExpr_Binop(Iop_Xor64, page, endpage));
   IRExpr* any = tmp(sb, Ity_I64, IRExpr_Binop(Iop_Or64, x1, x2));
   d->guard = tmp(sb, Ity_I1, IRExpr_Binop(Iop_CmpNE64, any, u64(0)));
   addStmtToIRSB(sb, IRStmt_Dirty(d));
}

/* One instruction at the constant address iaddr: close the window if it is
   full, count the instruction, touch its page(s). */
static void emit_instr(IRSB* sb, Addr iaddr, Int len)
{
   IRExpr* count = load64(sb, &in_window);
   IRExpr* full = tmp(sb, Ity_I1, IRExpr_Binop(Iop_CmpEQ64, count, u64((ULong)opt_window)));
   IRDirty* d = unsafeIRDirty_0_N(0, "mp_close_window", VG_(fnptr_to_fnentry)(mp_close_window),
                                  mkIRExprVec_0());
   d->guard = full;
   /* It rewrites the counter and the cache: say so, so that the loads
      below come after it. */
   d->mFx = Ifx_Modify;
   d->mAddr = mkIRExpr_HWord((HWord)&hot);
   d->mSize = sizeof hot;
   addStmtToIRSB(sb, IRStmt_Dirty(d));
   count = load64(sb, &in_window);
   addStmtToIRSB(sb, IRStmt_Store(Iend_LE, mkIRExpr_HWord((HWord)&in_window),
                                  tmp(sb, Ity_I64, IRExpr_Binop(Iop_Add64, count, u64(1)))));

   emit_access(sb, mkIRExpr_HWord(iaddr), len, NULL);
}

static void flush_queue(IRSB* sb)
{
   for (Int i = 0; i < queued; i++) {
      Ev* e = &queue[i];
      if (e->kind == EvInstr)
         emit_instr(sb, e->iaddr, e->size);
      else
         emit_access(sb, e->addr, e->size, e->guard);
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
         enqueue(out, EvInstr, NULL, st->Ist.IMark.len, NULL);
         queue[queued - 1].iaddr = (Addr)st->Ist.IMark.addr;
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
   if (sizeof(Addr) != 8)
      VG_(tool_panic)("mdkpages: 64-bit hosts only");
   if (opt_fd < 0) {
      VG_(fmsg_bad_option)("--mdk-fd", "mdkpages needs --mdk-fd=FD, the descriptor to write to\n");
   }
   VG_(memset)(seen, 0xff, sizeof seen);
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
