package dev.kbackfill.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.kbackfill.core.verify.Repair;
import dev.kbackfill.core.verify.Verdict;
import java.io.PrintWriter;

/** What {@code kbackfill repair} prints: what verify found, what the repair did (or would do), and the keys judged again. */
final class RepairOutput {

    private RepairOutput() {
    }

    static void print(Repair.Outcome o, String target, PrintWriter out) {
        VerifyCommand.print(o.found(), target, out);
        if (o.fixes().isEmpty() && o.unfixable() == 0) {
            out.println("nothing to repair");
            return;
        }
        if (o.dryRun()) {
            out.printf("would repair %d key(s): insert %d, replace %d, delete %d (dry run: nothing written)%n",
                    o.fixes().size(), o.count(Repair.Action.INSERT), o.count(Repair.Action.REPLACE),
                    o.count(Repair.Action.DELETE));
            o.fixes().forEach(f -> out.println("  " + f.action().label() + " " + f.key() + " (" + f.found().label()
                    + "): the range's last record of it at partition " + f.change().partition() + " offset "
                    + f.change().offset() + (f.change().isTombstone() ? ", a delete" : "")));
        } else if (!o.fixes().isEmpty()) {
            out.printf("repaired %d key(s) as job %s run %d in one commit: insert %d, replace %d, delete %d; %d row(s) "
                            + "written%s%s%n", o.fixes().size(), o.repairJob(), o.run(), o.count(Repair.Action.INSERT),
                    o.count(Repair.Action.REPLACE), o.count(Repair.Action.DELETE), o.written(),
                    o.keptOut() > 0 ? ", " + o.keptOut() + " kept out" : "",
                    o.superseded() > 0 ? ", " + o.superseded() + " left to the live writer (the log holds a newer "
                            + "record of them now)" : "");
            StringBuilder again = new StringBuilder();
            o.after().forEach((v, n) -> again.append(again.length() == 0 ? "" : ", ").append(v.label()).append(' ')
                    .append(n));
            out.printf("%s: the %d repaired key(s) judged again: %s%n", o.agrees() ? "AGREES" : "DISAGREES",
                    o.fixes().size(), again);
            o.stillWrong().forEach(s -> out.println(VerifyCommand.sampleLine(s)));
        }
        if (o.unfixable() > 0) {
            out.printf("%d key(s) %s not repaired: the target claims a newer version than the range's last that the "
                    + "log no longer holds; a repair never makes a row older than the log says (look at them, or "
                    + "rerun their range with --on-conflict overwrite)%n", o.unfixable(), Verdict.UNCONFIRMED.label());
        }
    }

    static String json(Repair.Outcome o, String job, String target) {
        ObjectMapper mapper = new ObjectMapper();
        ObjectNode root = mapper.createObjectNode();
        if (job != null) {
            root.put("job", job);
        }
        root.put("target", target).put("dryRun", o.dryRun()).put("agrees", o.agrees());
        root.set("found", VerifyCommand.tree(o.found(), job, target));
        ArrayNode fixes = root.putArray("fixes");
        o.fixes().forEach(f -> {
            ObjectNode n = fixes.addObject().put("action", f.action().label()).put("class", f.found().label());
            n.set("key", VerifyCommand.key(mapper, f.change().key()));
            n.put("partition", f.change().partition()).put("offset", f.change().offset())
                    .put("tombstone", f.change().isTombstone());
        });
        root.put("unfixable", o.unfixable());
        if (!o.dryRun() && !o.fixes().isEmpty()) {
            ObjectNode repair = root.putObject("repair");
            repair.put("job", o.repairJob()).put("run", o.run()).put("written", o.written()).put("keptOut", o.keptOut())
                    .put("supersededInLog", o.superseded());
            ObjectNode after = repair.putObject("after");
            for (Verdict v : Verdict.values()) {
                after.put(v.label(), o.after().getOrDefault(v, 0L));
            }
        }
        return root.toString();
    }
}
