package com.shop;

import java.util.List;

public class Invoice {
    private final List<String> lines;

    public Invoice(List<String> lines) {
        this.lines = lines;
    }

    public String lineAt(int index) {
        return lines.get(index);
    }

    public String render() {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i <= lines.size(); i++) {
            out.append(lineAt(i));
        }
        return out.toString();
    }
}
