package dev.ledger;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The docs point where the code is: every package of the service has its row in docs/design.md's layout
 * table, and every relative link of README.md and docs/ names a file that exists (and, into a Markdown
 * page, a heading or anchor that page has).
 */
class DocsTest {
    private static final Path ROOT = Path.of("").toAbsolutePath();
    private static final Path MAIN = ROOT.resolve("src/main/java");
    /** A Markdown link or image: {@code [text](target)}, the target up to a space or the closing parenthesis. */
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");
    private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.+?)\\s*#*\\s*$");
    private static final Pattern HTML_ANCHOR = Pattern.compile("<a\\s+(?:id|name)=\"([^\"]+)\"");
    private static final Pattern FENCE = Pattern.compile("^\\s*(```|~~~)");

    @Test
    void everyPackageOfTheServiceHasItsRowInTheLayoutTable() throws IOException {
        Set<String> packages = new TreeSet<>();
        try (Stream<Path> files = Files.walk(MAIN)) {
            files.filter(file -> file.toString().endsWith(".java"))
                    .forEach(file -> packages.add(MAIN.relativize(file.getParent()).toString().replace('/', '.')));
        }
        Set<String> rows = new HashSet<>();
        boolean inLayout = false;
        for (String line : Files.readAllLines(ROOT.resolve("docs/design.md"))) {
            if (line.startsWith("## ")) {
                inLayout = line.equals("## Layout");
            } else if (inLayout && line.startsWith("| `dev.ledger")) {
                String firstCell = line.substring(1, line.indexOf('|', 1));
                Matcher named = Pattern.compile("`(dev\\.ledger[\\w.]*)`").matcher(firstCell);
                while (named.find()) {
                    rows.add(named.group(1));
                }
            }
        }
        Set<String> missing = new TreeSet<>(packages);
        missing.removeAll(rows);
        Set<String> gone = new TreeSet<>(rows);
        gone.removeAll(packages);
        assertTrue(packages.size() > 10, "found the service's packages: " + packages);
        assertEquals(Set.of(), missing, "packages without a row in docs/design.md's layout table");
        assertEquals(Set.of(), gone, "rows of docs/design.md's layout table that name no package");
    }

    @Test
    void everyRelativeLinkOfTheDocsPointsSomewhere() throws IOException {
        List<Path> pages = new ArrayList<>(List.of(ROOT.resolve("README.md")));
        try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
            docs.filter(page -> page.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        List<String> broken = new ArrayList<>();
        int checked = 0;
        for (Path page : pages) {
            for (String target : links(page)) {
                if (target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
                    continue; // http:, https:, mailto: ... are not this repository's
                }
                checked++;
                int hash = target.indexOf('#');
                String file = hash < 0 ? target : target.substring(0, hash);
                String anchor = hash < 0 ? null : target.substring(hash + 1);
                Path linked = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
                if (!Files.exists(linked)) {
                    broken.add(ROOT.relativize(page) + ": " + target + " (no such file)");
                } else if (anchor != null && linked.toString().endsWith(".md") && !anchors(linked).contains(anchor)) {
                    broken.add(ROOT.relativize(page) + ": " + target + " (no such heading in " + ROOT.relativize(linked) + ")");
                }
            }
        }
        assertTrue(checked > 100, "read the docs' links: " + checked);
        assertEquals(List.of(), broken, "relative links that point nowhere");
    }

    /** The link targets of a page, outside code blocks and code spans. */
    private static List<String> links(Path page) {
        List<String> targets = new ArrayList<>();
        for (String line : prose(page)) {
            Matcher link = LINK.matcher(line.replaceAll("`[^`]*`", "``"));
            while (link.find()) {
                targets.add(link.group(1));
            }
        }
        return targets;
    }

    /** The anchors GitHub makes for a page: one per heading (numbered when repeated), and explicit HTML anchors. */
    static Set<String> anchors(Path page) {
        Set<String> anchors = new HashSet<>();
        for (String line : prose(page)) {
            Matcher heading = HEADING.matcher(line);
            if (heading.matches()) {
                String slug = slug(heading.group(1));
                String unique = slug;
                for (int n = 1; anchors.contains(unique); n++) {
                    unique = slug + "-" + n;
                }
                anchors.add(unique);
            }
            Matcher html = HTML_ANCHOR.matcher(line);
            while (html.find()) {
                anchors.add(html.group(1));
            }
        }
        return anchors;
    }

    /** GitHub's heading slug: lower case, without Markdown's marks and punctuation, spaces as hyphens. */
    static String slug(String heading) {
        String text = heading.replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1"); // a link's text only
        return text.toLowerCase(Locale.ROOT)
                .replaceAll("[^\\p{L}\\p{N}\\p{M} _-]", "")
                .replace(' ', '-');
    }

    /** A page's lines outside fenced code blocks. */
    private static List<String> prose(Path page) {
        List<String> lines = new ArrayList<>();
        boolean inFence = false;
        try {
            for (String line : Files.readAllLines(page)) {
                if (FENCE.matcher(line).find()) {
                    inFence = !inFence;
                } else if (!inFence) {
                    lines.add(line);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return lines;
    }
}
